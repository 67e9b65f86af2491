/**
 * The stack's functions as a local run invokes them: each loaded from its bundled asset into the sandbox, with the
 * environment the template gives it (resolved against the local resources, the run's overrides on top), its output
 * cut into log lines labelled `trigger`, `worker <id>` or `notifier`.
 */

import { AssemblyError } from '../errors';
import type { FunctionSpec, LocalApp } from './app-model';
import type { FunctionEnv, FunctionSandbox } from './function-sandbox';
import { type ResolveContext, resolveString, UnresolvedReference } from './intrinsics';
import { LOCAL_REGION } from './local-aws';
import type { RequestSerializer } from './request-serializer';
import type { LambdaContext } from './sqs-event-source';

/** One line a function printed during the run, with the function that printed it. */
export interface LocalLogLine {
  /** The function's label: `trigger`, `worker <id>`, `notifier`. */
  readonly fn: string;
  /** The stream the function wrote the line to. */
  readonly stream: 'stdout' | 'stderr';
  /** The line, without its newline. */
  readonly line: string;
}

export interface LoadedFunction {
  readonly spec: FunctionSpec;
  readonly label: string;
  readonly env: Readonly<Record<string, string>>;
  invocations: number;
  /** The job ids of a worker made by `defineWorker({ jobs })`; undefined for any other handler. */
  readonly jobIds?: readonly string[];
  invoke(event: unknown, context: LambdaContext): Promise<unknown>;
}

export interface LoadContext {
  readonly endpoint: string;
  readonly serializer: RequestSerializer;
  readonly sandbox: FunctionSandbox;
  readonly emit: (line: LocalLogLine) => void;
  /** Extra or replacement environment variables, by function: its worker id, `trigger`, `notifier` or logical id. */
  readonly environment?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** Each function the run invokes, loaded from its bundle with its own environment; throws listing what won't resolve. */
export async function loadFunctions(
  app: LocalApp,
  context: ResolveContext,
  load: LoadContext,
): Promise<Map<string, LoadedFunction>> {
  const labels = functionLabels(app);
  const problems: string[] = [];
  const loaded = new Map<string, LoadedFunction>();
  for (const spec of app.functions.values()) {
    const label = labels.get(spec.logicalId) ?? spec.logicalId;
    const overrides = {
      ...load.environment?.[spec.logicalId],
      ...load.environment?.[label.replace(/^worker /, '')],
    };
    const own: Record<string, string> = {};
    for (const [name, value] of Object.entries(spec.environment)) {
      if (name in overrides) continue;
      try {
        own[name] = resolveString(value, context);
      } catch (error) {
        if (!(error instanceof UnresolvedReference)) throw error;
        problems.push(
          `${label} (${spec.logicalId}): environment variable ${name}: ${error.message}; give it with environment: { '${label.replace(/^worker /, '')}': { ${name}: '...' } }`,
        );
      }
    }
    const serialized = await load.serializer.endpointFor(label);
    const env: FunctionEnv = {
      AWS_REGION: LOCAL_REGION,
      AWS_DEFAULT_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SESSION_TOKEN: undefined,
      AWS_PROFILE: undefined,
      AWS_ENDPOINT_URL: load.endpoint,
      // Conditional writes go one at a time (request-serializer.ts).
      AWS_ENDPOINT_URL_DYNAMODB: serialized,
      AWS_ENDPOINT_URL_S3: serialized,
      AWS_LAMBDA_FUNCTION_NAME: context.resources.get(spec.logicalId)?.ref ?? spec.logicalId,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memorySize),
      // No CloudWatch here: the EMF lines would only crowd the log.
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...own,
      ...overrides,
    };
    if (problems.length > 0) continue;
    const output = lineSplitter(label, load.emit);
    const module = load.sandbox.load(label, env, output, spec.bundleFile);
    const handler = module[spec.exportName];
    if (typeof handler !== 'function') {
      problems.push(`${label}: ${spec.bundleFile} exports no function ${spec.exportName}`);
      continue;
    }
    const jobIds = (handler as { jobIds?: unknown }).jobIds;
    const fn: LoadedFunction = {
      spec,
      label,
      ...(Array.isArray(jobIds) ? { jobIds: jobIds.filter((id): id is string => typeof id === 'string') } : {}),
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      invocations: 0,
      invoke: (event, lambda) => {
        fn.invocations += 1;
        return load.sandbox.run(label, env, output, () =>
          Promise.resolve().then(() => (handler as (e: unknown, c: LambdaContext) => unknown)(event, lambda)),
        );
      },
    };
    loaded.set(spec.logicalId, fn);
  }
  problems.push(...unimplementedJobs(app, loaded));
  if (problems.length > 0) throw new AssemblyError(app.stack.assemblyDir, problems);
  return loaded;
}

/**
 * The jobs a schedule routes to a worker whose bundled `defineWorker({ jobs })` leaves them out, found before anything
 * fires: in AWS their messages would go to the worker's dead-letter queue, and here the rows would wait as PENDING
 * until the run's timeout. A schedule's input names its job and its worker; defineWorker's handler lists its job ids
 * (a defineJob handler serves whichever job its worker is given).
 */
function unimplementedJobs(app: LocalApp, loaded: ReadonlyMap<string, LoadedFunction>): string[] {
  const implemented = new Map<string, { readonly ids: readonly string[]; readonly file: string }>();
  for (const worker of app.workers) {
    const fn = loaded.get(worker.function);
    const ids = fn?.jobIds;
    if (fn !== undefined && ids !== undefined) implemented.set(worker.workerId, { ids, file: fn.spec.bundleFile });
  }
  const problems: string[] = [];
  for (const schedule of app.schedules) {
    const workerId = workerOf(schedule.input);
    const worker = workerId === undefined ? undefined : implemented.get(workerId);
    if (worker === undefined || worker.ids.includes(schedule.jobId)) continue;
    problems.push(
      `worker ${workerId}: its defineWorker({ jobs }) has no job ${schedule.jobId} (it has ${worker.ids.join(', ') || 'none'}; bundle ${worker.file}): add it to the worker's entry, or give the job its own entry`,
    );
  }
  return [...new Set(problems)];
}

/** The worker a schedule's input routes its job to (its job is ScheduleSpec.jobId, read from the same input). */
function workerOf(input: string | undefined): string | undefined {
  if (input === undefined) return undefined;
  try {
    const { worker } = JSON.parse(input) as { worker?: unknown };
    return typeof worker === 'string' ? worker : undefined;
  } catch {
    return undefined;
  }
}

/** `trigger`, `worker <id>`, `notifier`; a logical id is added where a stack has several of one kind. */
function functionLabels(app: LocalApp): Map<string, string> {
  const labels = new Map<string, string>();
  const name = (ids: string[], label: string) => {
    const unique = [...new Set(ids)];
    for (const id of unique) labels.set(id, unique.length === 1 ? label : `${label} ${id}`);
  };
  name(
    app.schedules.map((s) => s.target),
    'trigger',
  );
  for (const worker of app.workers) labels.set(worker.function, `worker ${worker.workerId}`);
  name(
    app.streamSources.map((s) => s.function),
    'notifier',
  );
  return labels;
}

/** A function's output cut into lines, each emitted with the function's label. */
function lineSplitter(fn: string, emit: (line: LocalLogLine) => void) {
  const pending = { stdout: '', stderr: '' };
  return (text: string, stream: 'stdout' | 'stderr') => {
    const lines = (pending[stream] + text).split('\n');
    pending[stream] = lines.pop() ?? '';
    for (const line of lines) if (line !== '') emit({ fn, stream, line });
  };
}
