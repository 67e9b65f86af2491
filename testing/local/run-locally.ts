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
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { DynamoOccurrenceStore } from '../../functions/aws/occurrence-store';
import { messageOf } from '../../functions/protocol/errors';
import { type JobSettings, parseJobSettingsList } from '../../functions/protocol/job-settings';
import type { Occurrence, OccurrenceKey } from '../../functions/protocol/occurrence';
import type { Clock } from '../../functions/protocol/ports';
import { quoteValue } from '../../functions/protocol/quote-value';
import { ENV } from '../../functions/runtime-env';
import { AssemblyError } from '../errors';
import { type LocalApp, readLocalApp, type ScheduleSpec } from './app-model';
import { startSources } from './event-sources';
import { FunctionSandbox } from './function-sandbox';
import { type ResolveContext, resolveString } from './intrinsics';
import { type LoadedFunction, type LocalLogLine, loadFunctions } from './load-functions';
import { LOCAL_REGION, localClients } from './local-aws';
import { createResources } from './local-resources';
import { fireAtOnce, fireInTurn, fireSchedules, fireTimes, uniqueKeys } from './local-scheduler';
import { type MotoServer, startMotoServer } from './moto-server';
import { RequestSerializer } from './request-serializer';
import { deadLetterCounts, drainSubscribedQueues, readReports } from './run-results';
import {
  type LocalRegistry,
  type LocalRuntimeSchedule,
  localGroupName,
  readKeyedSchedules,
  registryOf,
  upsertLocalSchedules,
  watchKeyedSchedules,
} from './runtime-schedules';
import { judgeRow, type VerdictContext } from './verdict';

export type { LocalLogLine } from './load-functions';
export { fireTimes, scheduleInput } from './local-scheduler';
export type { LocalRuntimeSchedule } from './runtime-schedules';

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
  /**
   * Run-time schedules to create before firing, for the jobs deployed with `runtimeSchedules: true`: each is upserted
   * with the package's own `upsertSchedule`, as your app would, and fired as Scheduler would fire it (its key and input
   * in the occurrence). A kept run (`keep`) also fires the schedules upserted later, each once it appears.
   */
  readonly runtimeSchedules?: readonly LocalRuntimeSchedule[];
  /** A kept run's later fires: a run-time schedule that appeared (or changed) after the start, one call per delivery. */
  readonly onFire?: (fire: LocalFire) => void;
  /** What "now" is for the default `from`. */
  readonly clock?: Clock;
  /** Each line a function writes (its Powertools JSON logs); they are also kept in the result. */
  readonly onLog?: (line: LocalLogLine) => void;
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
  /** The schedule registry, where a job deployed with `runtimeSchedules: true` has one row per schedule key. */
  readonly registryTableName?: string;
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
  readonly fires: readonly LocalFire[];
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

/** One delivery of an occurrence to the trigger, and what the trigger answered. */
export interface LocalFire extends OccurrenceKey {
  /** The trigger's result, or `trigger failed: <error>` after Lambda's async retries. */
  readonly outcome: string;
  /** A redelivery after the rows settled (`redeliverLate`). */
  readonly late: boolean;
}

/** A run made with `keep: true`: everything still runs until `stop()`. */
export interface KeptLocalRun extends LocalRun {
  /** Stops what the run left running: its event sources, and the emulator when the run started it. */
  stop(): Promise<void>;
}

export const LOCAL_RUN_LIMITS = { maxCount: 50, maxCopies: 5, maxLogLines: 50_000 } as const;

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
  const selected = selectSchedules(app, options.jobs, options.runtimeSchedules ?? [], options.keep === true);

  const moto: MotoServer | undefined = options.endpoint === undefined ? await startMotoServer() : undefined;
  const endpoint = options.endpoint ?? (moto as MotoServer).endpoint;
  const sandbox = FunctionSandbox.open();
  const serializer = new RequestSerializer(new URL(endpoint));
  const logs: LocalLogLine[] = [];
  const sourceMaps = enableSourceMaps();
  let stopSources: () => Promise<void> = async () => undefined;
  let stopWatch: () => Promise<void> = async () => undefined;
  const stopAll = async () => {
    await stopWatch();
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
    const functions = await loadFunctions(app, context, {
      endpoint,
      serializer,
      sandbox,
      emit,
      environment: options.environment,
    });
    // The templates name their jobs' groups by their local names, as deployed they name the real ones.
    // A schedule's input names its worker's queue (a Ref): the emulator's queue, as deployed the real one.
    const withInput = <T extends { input?: string; inputNode?: unknown }>(s: T): T =>
      s.inputNode === undefined ? s : { ...s, input: resolveString(s.inputNode, context) };
    const fixed = selected.fixed.map(withInput);
    const templates = selected.templates.map(withInput).map((t) => ({
      ...t,
      keyedGroup: localGroupName(app, context, t.keyedGroup ?? '') ?? t.keyedGroup,
    }));
    const registry = registryOf(app, context, tableOf(app, functions, fixed[0] ?? templates[0]));
    if (options.runtimeSchedules !== undefined && options.runtimeSchedules.length > 0) {
      if (registry === undefined)
        throw new AssemblyError(assemblyDir, [
          'runtimeSchedules: the stack has no schedule registry (no job of it takes schedules at run time)',
        ]);
      await upsertLocalSchedules(clients, registry, options.runtimeSchedules, options.clock);
    }
    const keyed = await readKeyedSchedules(clients.scheduler, templates);
    const schedules = [...fixed, ...keyed.map((k) => k.spec)];
    if (schedules.length === 0 && options.keep !== true) throw new AssemblyError(assemblyDir, [NOTHING_TO_FIRE]);
    // Each job's rows are in the table its schedule's trigger writes (a stack may have several ScheduledJobs).
    const stores = new Map(
      [...schedules, ...templates].map((s) => [
        s.jobId,
        new DynamoOccurrenceStore(clients.documents, tableOf(app, functions, s)),
      ]),
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
        keys.map((key) => ({ schedule: scheduleOf(schedules, key), time: key.scheduledTime })),
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
      resources: resourceNames(app, context, functions, {
        endpoint,
        schedule: fixed[0] ?? templates[0],
        registry,
      }),
    };
    if (options.keep !== true) return result;
    // Kept, the run goes on playing Scheduler for the run-time schedules that appear after the start.
    const watch = watchKeyedSchedules({
      read: () => readKeyedSchedules(clients.scheduler, templates),
      seen: keyed,
      fire: async (specs) => {
        const now = new Date((options.clock ?? Date).now());
        const due = specs.flatMap((schedule) => fireTimes(schedule, now, count).map((time) => ({ schedule, time })));
        for (const f of await fireSchedules(due, functions, copies))
          options.onFire?.({ ...f.key, outcome: f.outcome, late: false });
      },
      onError: (error) =>
        emit({ fn: 'scheduler', stream: 'stderr', line: `reading the run-time schedules failed: ${messageOf(error)}` }),
    });
    stopWatch = watch.stop;
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

function scheduleOf(schedules: readonly ScheduleSpec[], key: OccurrenceKey): ScheduleSpec {
  return schedules.find((s) => s.jobId === key.jobId && s.scheduleKey === key.scheduleKey) as ScheduleSpec;
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
  run: { endpoint: string; schedule: ScheduleSpec; registry: LocalRegistry | undefined },
): LocalResourceNames {
  const tableName = tableOf(app, functions, run.schedule);
  const bucketName = [...functions.values()].map((f) => f.env[ENV.bucketName]).find((b) => b !== undefined);
  const groupId = run.schedule.groupName;
  const scheduleGroupName = [...context.resources.values()].find(
    (r) => r.type === 'AWS::Scheduler::ScheduleGroup' && (groupId === undefined || r.ref.startsWith(groupId)),
  )?.ref;
  const registryTableName = run.registry?.registryTableName;
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
    ...(registryTableName === undefined ? {} : { registryTableName }),
    workerQueues,
    cliOptions,
  };
}

const NOTHING_TO_FIRE =
  'nothing to fire: every schedule is disabled and no job that takes schedules at run time has one; name the jobs ' +
  'to fire, give runtimeSchedules to upsert, or keep the run and upsert them with `occurrences --local … schedules upsert`';

/**
 * The schedules to fire: the enabled fixed ones of the named jobs (or of every job), and the templates of the jobs
 * that take schedules at run time, whose schedules are read from the local Scheduler once resources exist.
 */
function selectSchedules(
  app: LocalApp,
  jobs: readonly string[] | undefined,
  runtimeSchedules: readonly LocalRuntimeSchedule[],
  keep: boolean,
): { fixed: ScheduleSpec[]; templates: ScheduleSpec[] } {
  const dir = app.stack.assemblyDir;
  const named = (s: ScheduleSpec) => jobs === undefined || jobs.includes(s.jobId);
  const fixed = app.schedules.filter(
    (s) => s.keyedGroup === undefined && named(s) && (jobs !== undefined || s.enabled),
  );
  const templates = app.schedules.filter((s) => s.keyedGroup !== undefined && named(s));
  if (jobs !== undefined) {
    const known = app.schedules.map((s) => s.jobId);
    const unknown = jobs.filter((id) => !known.includes(id));
    if (unknown.length > 0)
      throw new AssemblyError(dir, [
        `no schedule for job(s) ${unknown.join(', ')} (a disabled job has none); the scheduled jobs are: ${known.join(', ')}`,
      ]);
  }
  if (fixed.length === 0 && templates.length === 0) throw new AssemblyError(dir, [NOTHING_TO_FIRE]);
  const keyedIds = new Set(app.schedules.filter((s) => s.keyedGroup !== undefined).map((s) => s.jobId));
  const strays = runtimeSchedules.filter((r) => !keyedIds.has(r.jobId)).map((r) => r.jobId);
  if (strays.length > 0)
    throw new AssemblyError(dir, [
      `runtimeSchedules: job(s) ${[...new Set(strays)].join(', ')} take no schedules at run time (the jobs that do: ${[...keyedIds].join(', ') || 'none'})`,
    ]);
  if (fixed.length === 0 && runtimeSchedules.length === 0 && !keep) throw new AssemblyError(dir, [NOTHING_TO_FIRE]);
  return { fixed, templates };
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

/** The template's functions run with --enable-source-maps: their stack traces point into the TypeScript sources. */
function enableSourceMaps(): { restore(): void } {
  const p = process as NodeJS.Process & { sourceMapsEnabled?: boolean };
  const before = p.sourceMapsEnabled;
  p.setSourceMapsEnabled?.(true);
  return { restore: () => (before === undefined ? undefined : p.setSourceMapsEnabled?.(before)) };
}
