/**
 * A synthesized app's jobs, run on this machine against moto from what `cdk synth` wrote: the template's tables,
 * buckets, queues and topics created in the emulator, the bundled trigger, worker and notifier functions loaded
 * from their assets with the environment the template gives them (resolved against the local resources), and the
 * three things the emulator does not run played here, as `npm run local` plays them for this repository:
 *
 *   schedule ──(Target.Input, each occurrence fired twice at once, one fire time after the other)──▶ trigger ──▶ …
 *   worker queue ──(receive in batches, delete on success, batchItemFailures left)──▶ worker ──▶ table, report bucket
 *   table stream ──(FilterCriteria)──▶ notifier ──▶ report-ready topic ──▶ its queue
 *
 * until every fired occurrence is SUCCEEDED (and announced) or FAILED, or the time is up.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { type JobSettings, parseJobSettingsList } from '../../functions/protocol/job-settings';
import { type Occurrence, type OccurrenceKey, TERMINAL_STATUSES } from '../../functions/protocol/occurrence';
import type { Clock } from '../../functions/protocol/ports';
import { quoteValue } from '../../functions/protocol/quote-value';
import { scheduleTimes } from '../../functions/protocol/schedule-times';
import { ENV } from '../../functions/runtime-env';
import { AssemblyError } from '../errors';
import { type FunctionSpec, type LocalApp, readLocalApp, type ScheduleSpec } from './app-model';
import { passesFilters, sqsRecordForFilter } from './event-filter';
import { type FunctionEnv, FunctionSandbox } from './function-sandbox';
import { type ResolveContext, resolveString, UnresolvedReference } from './intrinsics';
import { LOCAL_REGION, type LocalClients, localClients } from './local-aws';
import { createResources, LOCAL_ACCOUNT } from './local-resources';
import { type MotoServer, startMotoServer } from './moto-server';
import { RequestSerializer } from './request-serializer';
import { type LambdaContext, lambdaContext, SqsEventSource } from './sqs-event-source';
import { StreamEventSource } from './stream-event-source';
import { judgeRow, type VerdictContext } from './verdict';

/** What runLocally runs and how: every member has a default, so `runLocally()` runs `cdk.out` as synthesized. */
export interface RunLocallyOptions {
  /** `cdk synth`'s output folder. Default `cdk.out`. */
  readonly assemblyDir?: string;
  /** The stack to run; default: the assembly's only stack with schedules. */
  readonly stackName?: string;
  /** An emulator that is already running (moto_server, http://127.0.0.1:PORT); default: one started for the run. */
  readonly endpoint?: string;
  /**
   * Fire the occurrences at or after this time. Default: now. They are fired without waiting for their time, one fire
   * time after the other: the next when the last one's rows have settled.
   */
  readonly from?: Date | string;
  /** Occurrences per schedule, 1-50. Default 1. */
  readonly count?: number;
  /** Job ids (schedule inputs' jobId, else schedule names) to fire. Default: every enabled schedule. */
  readonly jobs?: readonly string[];
  /** Deliveries of each occurrence to the trigger, at once: Scheduler delivers at least once. 1-5, default 2. */
  readonly copies?: number;
  /**
   * `in-turn` (the default): one fire time after the other, the next when the last one's rows have settled, as time
   * would bring them to a job that finishes before its next time. `at-once`: every occurrence at once, as Scheduler
   * delivers them after an outage: each job's overlap policy decides (under the default `skip`, one runs and the
   * others are SKIPPED, naming it).
   */
  readonly fire?: LocalFireMode;
  /**
   * Once every occurrence has settled, deliver each once more, late, as a redelivering Scheduler would: the trigger
   * must record nothing new. Default false.
   */
  readonly redeliverLate?: boolean;
  /**
   * Leave the emulator, its resources and the event sources running after the run, so that the `occurrences` CLI can
   * work on them (the result's `resources.cliOptions`); the result's `stop()` ends them. Default false.
   */
  readonly keep?: boolean;
  /** Give up waiting for the occurrences after this long. Default 120. */
  readonly timeoutSeconds?: number;
  /** Overrides every queue's visibility timeout, so that a failed batch comes back in seconds. */
  readonly visibilityTimeoutSeconds?: number;
  /** Concurrent pollers per worker queue. Default 2. */
  readonly pollers?: number;
  /** Extra or replacement environment variables, by function: its worker id, `trigger`, `notifier` or logical id. */
  readonly environment?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** What "now" is for the default `from`. */
  readonly clock?: Clock;
  /** Each line a function writes (its Powertools JSON logs); they are also kept in the result. */
  readonly onLog?: (line: LocalLogLine) => void;
}

/** One line a function printed during the run, with the function that printed it. */
export interface LocalLogLine {
  /** The function's label: `trigger`, `worker <id>`, `notifier`. */
  readonly fn: string;
  /** The stream the function wrote the line to. */
  readonly stream: 'stdout' | 'stderr';
  /** The line, without its newline. */
  readonly line: string;
}

/** One occurrence as the run left it in the table, judged against its job's policies. */
export interface LocalRunRow extends OccurrenceKey {
  /** The worker whose queue carried it. */
  readonly worker?: string;
  /** Its status at the end, or `MISSING` when the trigger recorded no row for it. */
  readonly status: Occurrence['status'] | 'MISSING';
  /** The row's attempt count. */
  readonly attempt?: number;
  /** Where its report was committed in the bucket. */
  readonly reportKey?: string;
  /** The error of its last failed attempt. */
  readonly lastError?: string;
  /** The notifier recorded the report's announcement (notifiedAt). */
  readonly announced: boolean;
  /** From the last claim to SUCCEEDED or FAILED. */
  readonly runMs?: number;
  /** The committed report, as text. */
  readonly report?: string;
  /** The row as last read. */
  readonly row?: Occurrence;
  /** It ended as its job's policies dictate (verdict.ts). */
  readonly expected: boolean;
  /** Why it is what it is (a skip's reason and what it yielded to, an error), and what was expected if not this. */
  readonly why: string;
}

/** What one function of the stack did during a local run. */
export interface LocalFunctionStats {
  /** The function's label: `trigger`, `worker <id>`, `notifier`. */
  readonly label: string;
  /** The function's logical id in the template. */
  readonly logicalId: string;
  /** How often it was invoked. */
  readonly invocations: number;
  /** DynamoDB and S3 requests its SDK clients sent. */
  readonly requests: number;
}

/** How runLocally fires the occurrences: one fire time after the other (`in-turn`), or all at once (`at-once`). */
export type LocalFireMode = 'in-turn' | 'at-once';

/** Where a local run's resources are in the emulator: what the `occurrences` CLI needs to work on them. */
export interface LocalResourceNames {
  /** The emulator: http://127.0.0.1:PORT. */
  readonly endpoint: string;
  /** The region the resources are in. */
  readonly region: string;
  /** The occurrences table of the fired jobs (the first, where a stack has several ScheduledJobs). */
  readonly tableName: string;
  /** The report bucket of the fired jobs. */
  readonly bucketName?: string;
  /** The schedule group of the fired jobs' schedules. */
  readonly scheduleGroupName?: string;
  /** Each worker's job queue URL, by worker id. */
  readonly workerQueues: Readonly<Record<string, string>>;
  /** The `occurrences` CLI's global options that point it at these resources. */
  readonly cliOptions: readonly string[];
}

/** What runLocally did: each occurrence as it ended and whether it ended as its policies dictate (`ok`). */
export interface LocalRun {
  /** The stack whose jobs ran. */
  readonly stackName: string;
  /**
   * Every occurrence ended as its job's policies dictate (verdict.ts: SUCCEEDED and announced, or SKIPPED, BUFFERED
   * then run, or CANCELLED as its overlap policy and catch-up window allow), no trigger failed, and nothing timed out.
   */
  readonly ok: boolean;
  /** Each fired occurrence as the run left it. */
  readonly rows: readonly LocalRunRow[];
  /**
   * Each trigger invocation's outcome (the trigger's result, or its error after Lambda's async retries); `late`: a
   * redelivery after the rows settled (`redeliverLate`).
   */
  readonly fires: readonly {
    readonly jobId: string;
    readonly scheduledTime: string;
    readonly outcome: string;
    readonly late: boolean;
  }[];
  /** What arrived on the queues subscribed to the stack's topics: one per announced report. */
  readonly announcements: readonly unknown[];
  /** Messages in each worker's dead-letter queue at the end, by worker id. */
  readonly deadLetters: Readonly<Record<string, number>>;
  /** What each function of the stack did. */
  readonly functions: readonly LocalFunctionStats[];
  /** The template's pieces the emulator does not play (by logical id), and why. */
  readonly notRun: readonly { readonly logicalId: string; readonly why: string }[];
  /** Every line the functions printed, oldest first. */
  readonly logs: readonly LocalLogLine[];
  /** Real time from the first fire until the rows settled (or the timeout). */
  readonly settleMs: number;
  /** The rows had not settled within `timeoutSeconds`. */
  readonly timedOut: boolean;
  /** How the occurrences were fired. */
  readonly fireMode: LocalFireMode;
  /** Where the run's resources are in the emulator. */
  readonly resources: LocalResourceNames;
}

/** A run made with `keep: true`: everything still runs until `stop()`. */
export interface KeptLocalRun extends LocalRun {
  /** Stops what the run left running: its event sources, and the emulator when the run started it. */
  stop(): Promise<void>;
}

export const LOCAL_RUN_LIMITS = { maxCount: 50, maxCopies: 5, maxLogLines: 50_000 } as const;

interface LoadedFunction {
  readonly spec: FunctionSpec;
  readonly label: string;
  readonly env: Readonly<Record<string, string>>;
  invocations: number;
  invoke(event: unknown, context: LambdaContext): Promise<unknown>;
}

/**
 * Run the jobs of a synthesized app locally, end to end, and return the occurrences as they ended, each judged
 * against its job's policies.
 *
 * @param options - where the cloud assembly is, which jobs, how many occurrences each, and the emulator to use.
 * @returns every occurrence as it ended, `ok` when each ended as its job's policies dictate; with `keep: true` the
 *   emulator and its resources stay up until `stop()`.
 * @throws AssemblyError when the cloud assembly cannot be read or run; MotoUnavailableError when no moto_server
 *   can be found or installed and no `endpoint` was given.
 *
 * @example
 * ```ts
 * // after `npx cdk synth --quiet`
 * import { runLocally } from 'scheduled-jobs-stack/testing';
 *
 * const run = await runLocally({ assemblyDir: 'cdk.out', count: 2 });
 * expect(run.ok).toBe(true);
 * expect(run.rows.map((row) => row.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
 * ```
 */
export async function runLocally(options: RunLocallyOptions & { readonly keep: true }): Promise<KeptLocalRun>;
/** Run the jobs of a synthesized app locally and stop the emulator afterwards (see the first overload). */
export async function runLocally(options?: RunLocallyOptions): Promise<LocalRun>;
export async function runLocally(options: RunLocallyOptions = {}): Promise<LocalRun | KeptLocalRun> {
  const assemblyDir = path.resolve(options.assemblyDir ?? 'cdk.out');
  const count = wholeInRange('count', options.count ?? 1, 1, LOCAL_RUN_LIMITS.maxCount);
  const copies = wholeInRange('copies', options.copies ?? 2, 1, LOCAL_RUN_LIMITS.maxCopies);
  const timeoutSeconds = wholeInRange('timeoutSeconds', options.timeoutSeconds ?? 120, 1, 3600);
  const pollers = wholeInRange('pollers', options.pollers ?? 2, 1, 20);
  const fireMode = fireModeOf(options.fire);
  const from = startTime(options.from, options.clock);
  const app = readLocalApp(assemblyDir, options.stackName);
  const { stack } = app;
  const schedules = selectSchedules(app, options.jobs);

  const moto: MotoServer | undefined = options.endpoint === undefined ? await startMotoServer() : undefined;
  const endpoint = options.endpoint ?? (moto as MotoServer).endpoint;
  const sandbox = FunctionSandbox.open();
  const serializer = new RequestSerializer(new URL(endpoint));
  const logs: LocalLogLine[] = [];
  const sourceMaps = enableSourceMaps();
  let stopSources: () => Promise<void> = async () => undefined;
  const stopAll = async () => {
    await stopSources();
    stopSources = async () => undefined;
    await serializer.stop();
    sandbox.close();
    sourceMaps.restore();
    await moto?.stop();
  };
  let kept = false;
  try {
    const clients = localClients(endpoint);
    const runId = randomBytes(3).toString('hex');
    const context = await createResources(app, clients, {
      runId,
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
    });
    const emit = (line: LocalLogLine) => {
      if (logs.length < LOCAL_RUN_LIMITS.maxLogLines) logs.push(line);
      options.onLog?.(line);
    };
    const functions = await loadFunctions(app, context, { endpoint, serializer, sandbox, emit, options });
    // Each job's rows are in the table its schedule's trigger writes (a stack may have several ScheduledJobs).
    const stores = new Map(
      schedules.map((s) => [s.jobId, new DynamoOccurrenceStore(clients.documents, tableOf(app, functions, s))]),
    );
    const read = (key: OccurrenceKey) => (stores.get(key.jobId) as DynamoOccurrenceStore).get(key);

    const sources = startSources(app, context, clients, functions, pollers);
    stopSources = sources.stop;
    const started = performance.now();
    const announcing = app.streamSources.length > 0;
    const run = { plan: { from, count, copies }, read, announcing, deadline: started + timeoutSeconds * 1000 };
    const { fired, rows, timedOut } =
      fireMode === 'in-turn'
        ? await fireInTurn(schedules, functions, run)
        : await fireAtOnce(schedules, functions, run);
    const keys = uniqueKeys(fired.map((f) => f.key));
    const settleMs = performance.now() - started;
    if (options.redeliverLate === true && !timedOut) {
      const late = await fireSchedules(
        keys.map((key) => ({ schedule: scheduleOf(schedules, key.jobId), time: key.scheduledTime })),
        functions,
        1,
      );
      fired.push(...late.map((f) => ({ ...f, late: true })));
    }
    if (options.keep !== true) {
      await sources.stop();
      stopSources = async () => undefined;
    }

    const reports = await readReports(clients, functions, rows);
    const verdict = { settings: jobSettingsOf(functions), announcing, keys };
    const judged = keys.map((key, i) => rowOf(key, rows[i], reports.get(i), verdict));
    const result: LocalRun = {
      stackName: stack.stackName,
      ok: !timedOut && fired.every((f) => !f.outcome.startsWith('trigger failed')) && judged.every((r) => r.expected),
      rows: judged,
      fires: fired.map((f) => ({ ...f.key, outcome: f.outcome, late: f.late === true })),
      announcements: await drainSubscribedQueues(app, context, clients),
      deadLetters: await deadLetterCounts(app, context, clients),
      functions: [...functions.values()].map((f) => ({
        label: f.label,
        logicalId: f.spec.logicalId,
        invocations: f.invocations,
        requests: serializer.requests.get(f.label) ?? 0,
      })),
      notRun: app.notRun,
      logs,
      settleMs,
      timedOut,
      fireMode,
      resources: resourceNames(app, context, functions, { endpoint, schedules }),
    };
    if (options.keep !== true) return result;
    kept = true;
    return { ...result, stop: stopAll };
  } finally {
    if (!kept) await stopAll();
  }
}

function fireModeOf(mode: unknown): LocalFireMode {
  if (mode === undefined) return 'in-turn';
  if (mode === 'in-turn' || mode === 'at-once') return mode;
  throw new TypeError(`runLocally: fire must be 'in-turn' or 'at-once', got ${quoteValue(mode)}`);
}

function scheduleOf(schedules: readonly ScheduleSpec[], jobId: string): ScheduleSpec {
  return schedules.find((s) => s.jobId === jobId) as ScheduleSpec;
}

/** Every job's settings, from the JOB_SETTINGS its worker was given: what the verdict judges each row by. */
function jobSettingsOf(functions: ReadonlyMap<string, LoadedFunction>): Map<string, JobSettings> {
  const settings = new Map<string, JobSettings>();
  for (const fn of functions.values()) {
    const json = fn.env[ENV.jobSettings];
    if (json === undefined) continue;
    for (const [id, s] of parseJobSettingsList(json, `${fn.label}'s ${ENV.jobSettings}`)) settings.set(id, s);
  }
  return settings;
}

/** The names the CLI needs, and its options that point at them. */
function resourceNames(
  app: LocalApp,
  context: ResolveContext,
  functions: ReadonlyMap<string, LoadedFunction>,
  run: { endpoint: string; schedules: readonly ScheduleSpec[] },
): LocalResourceNames {
  const [first] = run.schedules;
  const tableName = tableOf(app, functions, first);
  const bucketName = [...functions.values()].map((f) => f.env[ENV.bucketName]).find((b) => b !== undefined);
  const groupId = first.groupName;
  const scheduleGroupName = [...context.resources.values()].find(
    (r) => r.type === 'AWS::Scheduler::ScheduleGroup' && (groupId === undefined || r.ref.startsWith(groupId)),
  )?.ref;
  const workerQueues = Object.fromEntries(
    app.workers.flatMap((w) => {
      const url = context.resources.get(w.queue)?.ref;
      return url === undefined ? [] : [[w.workerId, url]];
    }),
  );
  const cliOptions = [
    '--endpoint',
    run.endpoint,
    '--table',
    tableName,
    ...(bucketName === undefined ? [] : ['--bucket', bucketName]),
    ...(scheduleGroupName === undefined ? [] : ['--schedule-group', scheduleGroupName]),
    ...Object.entries(workerQueues).flatMap(([id, url]) => ['--worker-queue', `${id}=${url}`]),
  ];
  return {
    endpoint: run.endpoint,
    region: LOCAL_REGION,
    tableName,
    bucketName,
    scheduleGroupName,
    workerQueues,
    cliOptions,
  };
}

/** The schedules to fire: those of the named jobs, or every enabled one. */
function selectSchedules(app: LocalApp, jobs: readonly string[] | undefined): ScheduleSpec[] {
  const dir = app.stack.assemblyDir;
  if (jobs === undefined) {
    const enabled = app.schedules.filter((s) => s.enabled);
    if (enabled.length === 0) throw new AssemblyError(dir, ['every schedule is disabled; name the jobs to fire']);
    return enabled;
  }
  const known = app.schedules.map((s) => s.jobId);
  const unknown = jobs.filter((id) => !known.includes(id));
  if (unknown.length > 0)
    throw new AssemblyError(dir, [
      `no schedule for job(s) ${unknown.join(', ')} (a disabled job has none); the scheduled jobs are: ${known.join(', ')}`,
    ]);
  return app.schedules.filter((s) => jobs.includes(s.jobId));
}

interface LoadContext {
  readonly endpoint: string;
  readonly serializer: RequestSerializer;
  readonly sandbox: FunctionSandbox;
  readonly emit: (line: LocalLogLine) => void;
  readonly options: RunLocallyOptions;
}

/** Each function the run invokes, loaded from its bundle with its own environment; throws listing what won't resolve. */
async function loadFunctions(
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
      ...load.options.environment?.[spec.logicalId],
      ...load.options.environment?.[label.replace(/^worker /, '')],
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
    const fn: LoadedFunction = {
      spec,
      label,
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
  if (problems.length > 0) throw new AssemblyError(app.stack.assemblyDir, problems);
  return loaded;
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

/** The worker queues' and the table streams' event sources, polling until stopped. */
function startSources(
  app: LocalApp,
  context: ResolveContext,
  clients: LocalClients,
  functions: ReadonlyMap<string, LoadedFunction>,
  pollers: number,
): { stop(): Promise<void> } {
  const queueSources = app.workers.map((worker) => {
    const fn = functions.get(worker.function) as LoadedFunction;
    const queue = context.resources.get(worker.queue);
    return new SqsEventSource({
      sqs: clients.sqs,
      queueUrl: queue?.ref ?? '',
      queueArn: queue?.attributes.Arn ?? '',
      functionTimeoutSeconds: fn.spec.timeoutSeconds,
      batchSize: Math.min(worker.batchSize, 10),
      pollers,
      handler: async (event, lambda) => {
        // Lambda deletes the messages its filter drops, without an invocation.
        const records = event.Records.filter((r) => passesFilters(sqsRecordForFilter(r), worker.filters));
        if (records.length === 0) return { batchItemFailures: [] };
        const response = (await fn.invoke({ ...event, Records: records } satisfies SQSEvent, lambda)) as
          | SQSBatchResponse
          | undefined;
        // Without ReportBatchItemFailures Lambda reads no response: the batch succeeded as it did not throw.
        return worker.reportBatchItemFailures && response?.batchItemFailures !== undefined
          ? response
          : { batchItemFailures: [] };
      },
    });
  });
  const streamSources = app.streamSources.map((source) => {
    const fn = functions.get(source.function) as LoadedFunction;
    return new StreamEventSource({
      streams: clients.streams,
      streamArn: context.resources.get(source.table)?.attributes.StreamArn ?? '',
      batchSize: source.batchSize,
      maxRetries:
        source.maximumRetryAttempts === undefined || source.maximumRetryAttempts < 0
          ? undefined
          : source.maximumRetryAttempts,
      handler: async (event) => {
        const records = event.Records.filter((r) => passesFilters(r, source.filters));
        if (records.length === 0) return { batchItemFailures: [] };
        const response = await fn.invoke(
          { Records: records } satisfies DynamoDBStreamEvent,
          lambdaContext(fn.label, fn.spec.timeoutSeconds),
        );
        const failures = (response as { batchItemFailures?: { itemIdentifier: string }[] } | undefined)
          ?.batchItemFailures;
        return { batchItemFailures: source.reportBatchItemFailures && failures !== undefined ? failures : [] };
      },
    });
  });
  for (const source of [...queueSources, ...streamSources]) source.start();
  return {
    stop: async () => {
      await Promise.all(queueSources.map((s) => s.stop()));
      await Promise.all(streamSources.map((s) => s.stop()));
    },
  };
}

interface Fired {
  readonly key: OccurrenceKey;
  readonly outcome: string;
  readonly late?: boolean;
}

interface FirePlan {
  readonly plan: { from: Date; count: number; copies: number };
  readonly read: (key: OccurrenceKey) => Promise<Occurrence | undefined>;
  readonly announcing: boolean;
  readonly deadline: number;
}

/**
 * The schedules' next `count` times, one round at a time as time would bring them: round k fires every schedule's
 * k-th time, and the next round starts when the round's rows have settled.
 */
async function fireInTurn(
  schedules: readonly ScheduleSpec[],
  functions: ReadonlyMap<string, LoadedFunction>,
  run: FirePlan,
): Promise<{ fired: Fired[]; rows: (Occurrence | undefined)[]; timedOut: boolean }> {
  const fired: Fired[] = [];
  const timesOf = new Map(schedules.map((s) => [s, fireTimes(s, run.plan.from, run.plan.count)]));
  for (let round = 0; round < run.plan.count; round++) {
    const due = schedules.flatMap((s) => {
      const time = timesOf.get(s)?.[round];
      return time === undefined ? [] : [{ schedule: s, time }];
    });
    if (due.length === 0) break;
    const roundFired = await fireSchedules(due, functions, run.plan.copies);
    fired.push(...roundFired);
    const settled = await waitUntilSettled(
      run.read,
      uniqueKeys(roundFired.map((f) => f.key)),
      run.announcing,
      run.deadline - performance.now(),
    );
    if (settled.timedOut) break;
  }
  const keys = uniqueKeys(fired.map((f) => f.key));
  return { fired, ...(await waitUntilSettled(run.read, keys, run.announcing, run.deadline - performance.now())) };
}

/** Every schedule's next `count` times at once, as Scheduler delivers a backlog after an outage. */
async function fireAtOnce(
  schedules: readonly ScheduleSpec[],
  functions: ReadonlyMap<string, LoadedFunction>,
  run: FirePlan,
): Promise<{ fired: Fired[]; rows: (Occurrence | undefined)[]; timedOut: boolean }> {
  const due = schedules.flatMap((schedule) =>
    fireTimes(schedule, run.plan.from, run.plan.count).map((time) => ({ schedule, time })),
  );
  const fired = await fireSchedules(due, functions, run.plan.copies);
  const keys = uniqueKeys(fired.map((f) => f.key));
  return { fired, ...(await waitUntilSettled(run.read, keys, run.announcing, run.deadline - performance.now())) };
}

/** One round of occurrences, each delivered `copies` times at once to its trigger (Lambda async retries). */
async function fireSchedules(
  due: readonly { schedule: ScheduleSpec; time: string }[],
  functions: ReadonlyMap<string, LoadedFunction>,
  copies: number,
): Promise<Fired[]> {
  const deliveries = due.flatMap((d) => Array.from({ length: copies }, () => d));
  return Promise.all(
    deliveries.map(async ({ schedule, time }) => {
      const trigger = functions.get(schedule.target) as LoadedFunction;
      const event = scheduleInput(schedule, time);
      const key = { jobId: schedule.jobId, scheduledTime: time };
      let error = '';
      for (let attempt = 0; attempt <= trigger.spec.asyncRetryAttempts; attempt++) {
        try {
          const result = await trigger.invoke(event, lambdaContext(trigger.label, trigger.spec.timeoutSeconds));
          return { key, outcome: String(result) };
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
        }
      }
      // Deployed, the event would now be in the trigger's dead-letter queue.
      return { key, outcome: `trigger failed: ${error}` };
    }),
  );
}

/** The schedule's next `count` times at or after `from`, within its start and end dates (functions/protocol/schedule-times.ts). */
export function fireTimes(schedule: ScheduleSpec, from: Date, count: number): string[] {
  const start =
    schedule.startDate === undefined ? from : new Date(Math.max(from.getTime(), Date.parse(schedule.startDate)));
  const end = schedule.endDate === undefined ? Number.POSITIVE_INFINITY : Date.parse(schedule.endDate);
  const times: string[] = [];
  for (const t of scheduleTimes({ schedule: schedule.expression, timeZone: schedule.timeZone }, start)) {
    if (t.getTime() > end || times.length === count) break;
    times.push(t.toISOString().replace('.000Z', 'Z'));
  }
  return times;
}

/** The schedule's Target.Input as Scheduler delivers it at `time`, its context placeholders filled in. */
export function scheduleInput(schedule: ScheduleSpec, time: string): unknown {
  const group = schedule.groupName ?? 'default';
  const arn = `arn:aws:scheduler:${LOCAL_REGION}:${LOCAL_ACCOUNT}:schedule/${group}/${schedule.name ?? schedule.logicalId}`;
  const text = (schedule.input ?? '{}')
    .replaceAll('<aws.scheduler.scheduled-time>', time)
    .replaceAll('<aws.scheduler.schedule-arn>', arn)
    .replaceAll('<aws.scheduler.execution-id>', randomUUID())
    .replaceAll('<aws.scheduler.attempt-number>', '1');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The occurrence table the schedule's trigger writes (its OCCURRENCE_TABLE_NAME). */
function tableOf(app: LocalApp, functions: ReadonlyMap<string, LoadedFunction>, schedule: ScheduleSpec): string {
  const name = functions.get(schedule.target)?.env[ENV.tableName];
  if (name === undefined)
    throw new AssemblyError(app.stack.assemblyDir, [
      `the trigger ${schedule.target} has no ${ENV.tableName}: is this a ScheduledJobs stack?`,
    ]);
  return name;
}

const POLL_MS = 250;

/** Reads the rows until each is SUCCEEDED (and announced, where announcing) or FAILED, or the time is up. */
async function waitUntilSettled(
  read: (key: OccurrenceKey) => Promise<Occurrence | undefined>,
  keys: readonly OccurrenceKey[],
  announcing: boolean,
  timeoutMs: number,
): Promise<{ rows: (Occurrence | undefined)[]; timedOut: boolean }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const rows = await Promise.all(keys.map(read));
    const settled = rows.every(
      (r) =>
        r !== undefined &&
        TERMINAL_STATUSES.includes(r.status) &&
        (r.status !== 'SUCCEEDED' || !announcing || r.notifiedAt !== undefined),
    );
    if (settled) return { rows, timedOut: false };
    if (performance.now() >= deadline) return { rows, timedOut: true };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The reports of the SUCCEEDED rows, from the bucket their worker writes to (REPORT_BUCKET_NAME). */
async function readReports(
  clients: LocalClients,
  functions: ReadonlyMap<string, LoadedFunction>,
  rows: readonly (Occurrence | undefined)[],
): Promise<Map<number, string>> {
  const buckets = [...functions.values()].map((f) => f.env[ENV.bucketName]).filter((b) => b !== undefined);
  const reports = new Map<number, string>();
  for (const [i, row] of rows.entries()) {
    if (row?.reportKey === undefined || buckets.length === 0) continue;
    const object = await clients.s3.send(new GetObjectCommand({ Bucket: buckets[0], Key: row.reportKey }));
    reports.set(i, (await object.Body?.transformToString()) ?? '');
  }
  return reports;
}

/** Takes every message off the queues subscribed to the stack's topics (the report-ready announcements). */
async function drainSubscribedQueues(
  app: LocalApp,
  context: ResolveContext,
  clients: LocalClients,
): Promise<unknown[]> {
  const bodies: unknown[] = [];
  for (const subscription of app.subscriptions) {
    const url = context.resources.get(subscription.queue)?.ref;
    // Bounded: a queue of at most 100 batches of 10.
    for (let i = 0; i < 100 && url !== undefined; i++) {
      const received = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      for (const m of messages) {
        bodies.push(parseOrText(m.Body ?? ''));
        await clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      }
    }
  }
  return bodies;
}

/** Messages in each worker queue's dead-letter queue, visible or not. */
async function deadLetterCounts(
  app: LocalApp,
  context: ResolveContext,
  clients: LocalClients,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const worker of app.workers) {
    const queue = app.queues.find((q) => q.logicalId === worker.queue);
    const target = (queue?.redrivePolicy as { deadLetterTargetArn?: unknown } | undefined)?.deadLetterTargetArn;
    const dlqId = (target as { 'Fn::GetAtt'?: string[] } | undefined)?.['Fn::GetAtt']?.[0];
    const url = dlqId === undefined ? undefined : context.resources.get(dlqId)?.ref;
    if (url === undefined) continue;
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    const a = attributes.Attributes ?? {};
    counts[worker.workerId] =
      Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  return counts;
}

function rowOf(
  key: OccurrenceKey,
  row: Occurrence | undefined,
  report: string | undefined,
  verdict: VerdictContext,
): LocalRunRow {
  const judged = judgeRow(key, row, verdict);
  if (row === undefined) return { ...key, status: 'MISSING', announced: false, ...judged };
  const end = row.succeededAt ?? row.failedAt;
  return {
    ...key,
    ...judged,
    worker: row.worker,
    status: row.status,
    attempt: row.attempt,
    reportKey: row.reportKey,
    lastError: row.lastError,
    announced: row.notifiedAt !== undefined,
    runMs: row.claimedAt !== undefined && end !== undefined ? Date.parse(end) - Date.parse(row.claimedAt) : undefined,
    report,
    row,
  };
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

function uniqueKeys(keys: readonly OccurrenceKey[]): OccurrenceKey[] {
  const seen = new Map<string, OccurrenceKey>();
  for (const k of keys) seen.set(`${k.jobId}\u0000${k.scheduledTime}`, k);
  // Each job's occurrences together, in time order: how the policies between them read.
  return [...seen.values()].sort(
    (a, b) => a.jobId.localeCompare(b.jobId) || a.scheduledTime.localeCompare(b.scheduledTime),
  );
}

function startTime(from: Date | string | undefined, clock: Clock | undefined): Date {
  if (from === undefined) return new Date((clock ?? Date).now());
  const date = typeof from === 'string' ? new Date(from) : from;
  if (!(date instanceof Date) || Number.isNaN(date.getTime()))
    throw new TypeError(
      `runLocally: from must be a Date or an ISO date-time such as 2026-11-30T06:00:00Z, got ${quoteValue(from)}`,
    );
  return date;
}

function wholeInRange(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new TypeError(`runLocally: ${name} must be a whole number from ${min} to ${max}, got ${quoteValue(value)}`);
  return value;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The template's functions run with --enable-source-maps: their stack traces point into the TypeScript sources. */
function enableSourceMaps(): { restore(): void } {
  const p = process as NodeJS.Process & { sourceMapsEnabled?: boolean };
  const before = p.sourceMapsEnabled;
  p.setSourceMapsEnabled?.(true);
  return { restore: () => (before === undefined ? undefined : p.setSourceMapsEnabled?.(before)) };
}
