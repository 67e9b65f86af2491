/**
 * One simulated occurrence, end to end: Scheduler → trigger Lambda → job queue → worker Lambdas → table stream →
 * notifier Lambda, all running the real handlers and adapters over the stateful fakes in sim/fakes/fake-aws.ts,
 * on virtual time, with the faults of a FaultPlan injected between the adapters and the fakes (the "network").
 *
 * What the simulation models, and how:
 * - Network (sim/network.ts): every SDK call takes 5 ms each way; a fault can fail it, slow it, lose its response
 *   (after it was applied), or kill the calling process before or after it is applied. An aborted call (the
 *   adapters pass an AbortSignal) rejects at once, but a request already on its way is still applied.
 * - Lambda: each invocation is an Actor. The worker is killed at its function timeout, the trigger at 10 s and the
 *   notifier at 30 s. A failed trigger invocation is retried twice (1 and 2 minutes later), then dropped.
 * - SQS (sim/job-queue.ts): visibility timeout, ChangeMessageVisibility by the current receipt handle, redelivery
 *   of an unacknowledged message, maxReceiveCount and a DLQ, batches of up to 5, duplicate copies
 *   (plan.sqsDuplicates).
 * - Table stream: every write that makes the row SUCCEEDED is delivered to the notifier, retried with backoff
 *   (2, 4, 8 ... 60 s) until it succeeds. The SNS FIFO topic drops a repeated deduplication id within 5 minutes.
 * - Scheduler (policy world): each of the scenario's other occurrences fires at its scheduled time unless the
 *   schedule is disabled then (sim/fakes/fake-schedule-switch.ts, the ScheduleSwitch of the worker's pause after
 *   failures and of the operator's pause and resume), and its delivery arrives `lateMs` later (in flight: a disable
 *   does not stop it). The first occurrence's deliveries (plan.schedulerDeliveries) fire before any pause.
 * - The operator (policy world): pauseJob and resumeJob, the real functions over the real job-state adapter, each in
 *   its own process at its time, racing the workers' writes of the job-state row; and cancelOccurrence of one
 *   occurrence, over the real operator store, racing its claims, heartbeats, commit point and buffer wake-ups. No
 *   plan faults the operator.
 */
import type { SQSEvent } from 'aws-lambda';
import { SnsAnnouncer } from '../functions/aws/announcer';
import { DynamoJobSlotStore } from '../functions/aws/job-slot-store';
import { DynamoJobStateStore } from '../functions/aws/job-state-store';
import { S3MultipartUploads } from '../functions/aws/multipart-report-store';
import { DynamoOccurrenceReader } from '../functions/aws/occurrence-reader';
import { DynamoOccurrenceStore, OperatorOccurrenceStore } from '../functions/aws/occurrence-store';
import { S3ReportStore } from '../functions/aws/report-store';
import { DynamoRunStateStore } from '../functions/aws/run-state-store';
import { SqsWorkQueue } from '../functions/aws/work-queue';
import { createNotifierHandler } from '../functions/notifier';
import { type CancelResult, cancelOccurrence } from '../functions/protocol/cancel-occurrence';
import {
  type DeployedJob,
  type PauseResult,
  pauseJob,
  type ResumeResult,
  resumeJob,
} from '../functions/protocol/job-control';
import { type JobSettings, type OverlapPolicy, withDefaults } from '../functions/protocol/job-settings';
import { isJobStateKey } from '../functions/protocol/job-state';
import {
  isoSeconds,
  type Occurrence,
  type OccurrenceKey,
  REVOKED_LEASE_PREFIX,
} from '../functions/protocol/occurrence';
import type { Clock, JobDefinition, Logger } from '../functions/protocol/ports';
import { isUnannounced, routedWorkers, stuckReason } from '../functions/protocol/reconcile';
import type { RegistryReader } from '../functions/protocol/runtime-schedule-guard';
import { type JobRoute, scheduleEventOf } from '../functions/protocol/schedule-event';
import { seriesKeyOf, seriesOf } from '../functions/protocol/schedule-key';
import { expectedStatusShard, fromTableItem } from '../functions/protocol/table-schema';
import {
  RECONCILE_EVERY_MINUTES,
  reconcileThresholds,
  stuckAfterSeconds,
  type WorkerLimits,
  workerLimits,
} from '../functions/protocol/worker-limits';
import { createReconcilerHandler } from '../functions/reconciler';
import { createTriggerHandler } from '../functions/trigger';
import { createWorkerHandler, type WorkerHandler } from '../functions/worker';
import { Beliefs } from './beliefs';
import type { Row } from './fakes/dynamo-expressions';
import type { FakeAws } from './fakes/fake-aws';
import { multipartOf, SIM_PART_BYTES } from './fakes/fake-multipart';
import { FakeScheduleSwitch } from './fakes/fake-schedule-switch';
import { streamEvent } from './fakes/stream-event';
import { JobQueue, type Received } from './job-queue';
import { modelJob } from './model-job';
import { Network, type NetworkHost, type SendingClient } from './network';
import type { OperatorRecord, RunStart, SideEffect, TraceLine, WorldOutcome } from './outcome';
import { type ActorKind, BOUNDS, type CallFault, type FaultPlan, seededRandom } from './plan';
import { type SdkClients, sdkClients, sharedFakeAws } from './sdk-clients';
import { ServiceObserver } from './service-observer';
import { OURS, type ProtocolVariant } from './variants';
import { Actor, VirtualTime } from './virtual-time';

export const JOB_ID = 'report';
/** The one worker of the simulated stack, which runs the job. */
export const WORKER_ID = 'reports';
export const SCHEDULED_TIME = '2026-11-30T06:00:00Z';
export const T0 = Date.parse(SCHEDULED_TIME);
export const REPORT_KEY = `reports/${JOB_ID}/${SCHEDULED_TIME}.txt`;
const TABLE = 'occurrences';
const BUCKET = 'reports-bucket';
/** The one queue of the world: a route naming another URL is a bug the simulation must show, not a send to nowhere. */
function queueAt(url: string, queue: SqsWorkQueue): SqsWorkQueue {
  if (url !== QUEUE_URL) throw new Error(`simulation: a route names queue ${url}, not the worker's ${QUEUE_URL}`);
  return queue;
}

export const QUEUE_URL = 'https://sqs.eu-central-1.amazonaws.com/123456789012/jobs';
const TOPIC_ARN = 'arn:aws:sns:eu-central-1:123456789012:report-ready.fifo';
/** Lambda's fixed settings the stack deploys (lib/scheduled-jobs.ts). */
const TRIGGER_TIMEOUT_MS = 10_000;
const TRIGGER_RETRY_DELAYS_MS = [60_000, 120_000];
const NOTIFIER_TIMEOUT_MS = 30_000;
/** How long after the change to SUCCEEDED its stream record reaches the notifier. */
const STREAM_DELAY_MS = 500;

export interface WorldOptions {
  readonly variant?: ProtocolVariant;
  /** Stop the run here (true time) even if events remain; defaults to the deadline plus the finish bound. */
  readonly horizon?: number;
  /** Uniform [0, 1) for the retry jitter; defaults to the plan's seeded generator. */
  readonly jitter?: () => number;
  /** Replaces the model job (sim/model-job.ts: plan.jobMs in steps of JOB_STEP_MS, each one side effect). */
  readonly job?: JobDefinition;
  /** Called once the world is set up, with its fakes and true time: sim/resumable-world.ts watches the row's writes. */
  readonly observe?: (aws: FakeAws, now: () => number) => void;
  /** More occurrences of the job under an overlap policy (sim/policy-world.ts); the plan's faults apply to all. */
  readonly scenario?: PolicyScenario;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED']);

/** The scenario's settings of the job, beside the variant's. */
function scenarioSettings(scenario: PolicyScenario | undefined) {
  if (scenario === undefined) return {};
  const { overlap, catchupWindowSeconds, pauseAfterFailures } = scenario;
  return {
    overlap,
    ...(catchupWindowSeconds === undefined ? {} : { catchupWindowSeconds }),
    ...(pauseAfterFailures === undefined ? {} : { pauseAfterFailures }),
  };
}

/** The stack's schedule of the reconciler (lib/scheduled-jobs.ts: every RECONCILE_EVERY_MINUTES). */
export const RECONCILE_EVERY_MS = RECONCILE_EVERY_MINUTES * 60_000;

/**
 * When the reconciler first runs, ms after the first scheduled time: its rule's phase is not the job's, so each plan
 * draws one in [0, 5 min) from its seed (without touching the seeded jitter the rest of the run draws from).
 */
export const reconcilePhaseMs = (plan: FaultPlan): number =>
  Math.floor(seededRandom(plan.seed ^ 0x5eed)() * RECONCILE_EVERY_MS);

/**
 * The job's overlap policy, and its other occurrences: each scheduled (and fired once) `afterMs` after the first,
 * its Scheduler delivery `lateMs` after that. The other fields are the job's catch-up window and pause after
 * failures, and the operator's pauses and resumes; each is optional.
 */
export interface PolicyScenario {
  readonly overlap: OverlapPolicy;
  readonly others: readonly {
    readonly afterMs: number;
    readonly jobMs: number;
    readonly lateMs?: number;
    /** Its schedule key, an index into `keys` (the keyed world); absent: the first key. */
    readonly key?: number;
  }[];
  /**
   * The keyed world (sim/keyed-world.ts): the job takes schedules at run time and each occurrence is of one of these
   * schedule keys (the first occurrence of the first), so that each key is a series with its own slot and policy.
   */
  readonly keys?: readonly string[];
  /** The job's catchupWindowSeconds (validated as the stack's settings are); absent: its retry deadline. */
  readonly catchupWindowSeconds?: number;
  /** The job's pauseAfterFailures. */
  readonly pauseAfterFailures?: number;
  /**
   * The operator's pauseJob and resumeJob, each at `atMs` after the first scheduled time, in their own process.
   * A resume catches up on the schedule's fire times, so every occurrence must then be on a whole minute (the
   * schedule is the cron of those minutes: scheduleOf).
   */
  readonly operator?: readonly OperatorAction[];
}

export interface OperatorAction {
  readonly atMs: number;
  readonly action: 'pause' | 'resume' | 'cancel';
  /** cancel: which occurrence, an index into the scenario's occurrences (0: the first). */
  readonly target?: number;
}

/** The operator's pause note, unique per action so that the invariants can tell whose pause the row keeps. */
export const pauseNoteOf = (index: number): string => `maintenance (operator action ${index})`;
const OPERATOR = 'operator@sim';

/**
 * The Scheduler expression whose fire times are exactly the scenario's scheduled times: a cron of their minutes in
 * the first one's hour. Throws when a time is not on a whole minute of that hour (a scenario with operator actions
 * is generated on whole minutes).
 */
export function scheduleOf(scenario: PolicyScenario | undefined): string {
  const minutes = scenarioTimes(scenario).map((t) => {
    const offset = Date.parse(t) - T0;
    if (offset % 60_000 !== 0 || offset >= 3_600_000)
      throw new Error(
        `scenario time ${t} is not on a whole minute of the first one's hour: no cron fires exactly then`,
      );
    return offset / 60_000;
  });
  const at = new Date(T0);
  return `cron(${[...new Set(minutes)].join(',')} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} ? ${at.getUTCFullYear()})`;
}

/** The registry of a scenario's keys as the trigger reads it: each key held, with no input of its own. */
function heldKeys(occurrences: readonly ScenarioOccurrence[]): RegistryReader {
  const keys = new Set(occurrences.flatMap((o) => (o.scheduleKey === undefined ? [] : [o.scheduleKey])));
  return { get: async (_jobId, key) => (keys.has(key) ? {} : undefined) };
}

/** One occurrence of a scenario: its schedule key (keyed scenarios only) and scheduled time. */
export interface ScenarioOccurrence {
  readonly scheduleKey?: string;
  readonly scheduledTime: string;
}

/** A scenario's occurrences in order, the first one's first (scenarioTimes, with their keys). */
export function scenarioOccurrences(scenario: PolicyScenario | undefined): ScenarioOccurrence[] {
  const times = scenarioTimes(scenario);
  const keys = scenario?.keys;
  return times.map((scheduledTime, i) => {
    const index = i === 0 ? 0 : (scenario?.others[i - 1]?.key ?? 0);
    const scheduleKey = keys === undefined ? undefined : keys[index % keys.length];
    return scheduleKey === undefined ? { scheduledTime } : { scheduleKey, scheduledTime };
  });
}

/**
 * How the world names an occurrence in what it records (starts, claims, ends, side effects): its scheduled time, or
 * for a keyed one `key|time`, so that two keys' occurrences at one time are told apart.
 */
export const occurrenceIdOf = (o: ScenarioOccurrence): string =>
  o.scheduleKey === undefined ? o.scheduledTime : `${o.scheduleKey}|${o.scheduledTime}`;

/** The id of a table row of an occurrence (its jobId attribute is its series). */
const rowIdOf = (row: Row): string =>
  occurrenceIdOf({ ...seriesKeyOf(String(row.jobId)), scheduledTime: String(row.scheduledTime) });

/** The scheduled times of a scenario's occurrences, the first one's first. */
export function scenarioTimes(scenario: PolicyScenario | undefined): string[] {
  const others = (scenario?.others ?? []).map((o) => isoSeconds(T0 + Math.round(o.afterMs / 1000) * 1000));
  return [SCHEDULED_TIME, ...others];
}

/**
 * How long the reconciler may take to get a row moving that has no message left (its message went to the job DLQ, or
 * its trigger's send failed for good): the row must wait stuckAfterSeconds, the deployed threshold, and the next run
 * (every 5 minutes) re-enqueues it.
 */
export function repairBoundMs(limits: WorkerLimits): number {
  return stuckAfterSeconds(limits) * 1000 + RECONCILE_EVERY_MS;
}

/**
 * How long after its deadline an occurrence may still be finishing: a message can come back once per worker crash,
 * each after the queue's visibility timeout, and the last delivery needs one more to record the outcome; and a row
 * left without a message waits for the reconciler's repair.
 */
export function finishBoundMs(limits: WorkerLimits): number {
  return (BOUNDS.maxWorkerCrashes + 2) * limits.queueVisibilityTimeoutSeconds * 1000 + repairBoundMs(limits);
}

/** Run one plan through a new world. */
export function runWorld(plan: FaultPlan, options: WorldOptions = {}): Promise<WorldOutcome> {
  return new World(plan, options).run();
}

interface Handlers {
  readonly reconciler: ReturnType<typeof createReconcilerHandler>;
  readonly trigger: ReturnType<typeof createTriggerHandler>;
  readonly worker: WorkerHandler;
  readonly notifier: ReturnType<typeof createNotifierHandler>;
  readonly pause: (note: string) => Promise<PauseResult>;
  readonly resume: () => Promise<ResumeResult>;
  readonly cancel: (key: OccurrenceKey, note: string) => Promise<CancelResult>;
}

/** One Lambda invocation the world retries when it fails: settled once it returned, failed or timed out. */
interface Invocation {
  readonly actor: Actor;
  settled: boolean;
}

type StreamRecord = ReturnType<typeof streamEvent>;

/** One occurrence's world: the handlers, the fakes they run over, the processes that run them, and the plan's faults. */
export class World implements NetworkHost {
  private readonly plan: FaultPlan;
  private readonly variant: ProtocolVariant;
  private readonly settings: JobSettings;
  private readonly limits: WorkerLimits;
  private readonly deadlineAt: number;
  private readonly horizon: number;
  private readonly vt = new VirtualTime(T0);
  /** Seeded from the plan: the queue poller's delays and, unless options.jitter, the retry jitter. */
  private readonly random: () => number;
  private readonly trace: TraceLine[] = [];
  private readonly aws: FakeAws;
  private readonly observer: ServiceObserver;
  private readonly network: Network;
  private readonly beliefs = new Beliefs();
  private readonly sideEffects: SideEffect[] = [];
  private readonly handlers: Handlers;
  private readonly jobQueue: JobQueue;

  private readonly actorCounts: Record<ActorKind, number> = {
    trigger: 0,
    worker: 0,
    notifier: 0,
    reconciler: 0,
    operator: 0,
    app: 0,
  };
  private readonly workerSkews: number[] = [];
  private readonly triggerFailures = new Map<number, number>();
  private readonly triggerDeliveryOf = new Map<Actor, number>();
  private notifierFailures = 0;
  private streamTries = 0;
  private workerCrashes = 0;
  /** Writes after which the row's status index key was not its status's shard (invariant 5). */
  private readonly indexKeyMismatches: string[] = [];
  private maxFreezeMs = 0;
  /** When each occurrence was first recorded BUFFERED (true time). */
  private readonly firstBufferedAt = new Map<string, number>();
  /** When a worker first started an attempt of each occurrence (its "claimed occurrence" line, past the policy). */
  private readonly firstStartedAt = new Map<string, number>();
  private triggerEventsDropped = 0;
  /** The reconciler's 5-minute ticks, and the runs among them that had something to fix (run in full). */
  private reconcilerTicks = 0;
  private reconcilerRuns = 0;
  /** Occurrences the reconciler re-enqueued (a row left without a message). */
  private reconcilerRequeues = 0;
  /** The job's schedule in Scheduler: disabled by a pause, it holds back later fire times. */
  private readonly schedule: FakeScheduleSwitch;
  private readonly route: JobRoute;
  private readonly firesHeldBack: { scheduledTime: string; at: number }[] = [];
  private readonly operatorActions: OperatorRecord[] = [];
  private readonly runStarts: RunStart[] = [];
  private readonly leaseClaims = new Map<string, { scheduledTime: string; at: number }>();
  private readonly terminalAt = new Map<string, number>();
  /** When an operator's cancel made each occurrence CANCELLED (true time, the write as the table applied it). */
  private readonly operatorCancelledAt = new Map<string, number>();
  /** Every status each occurrence's row had, over its whole life. */
  private readonly statusesSeen = new Map<string, Set<string>>();
  private readonly killedAt = new Map<string, number>();
  /** Faults beyond the bounds, skipped. */
  private readonly skipped = { crashes: 0, triggerFaults: 0, notifierFaults: 0 };

  private readonly scenario: PolicyScenario | undefined;

  constructor(plan: FaultPlan, options: WorldOptions = {}) {
    this.plan = plan;
    this.variant = options.variant ?? OURS;
    this.scenario = options.scenario;
    const base = withDefaults({ id: JOB_ID, ...this.variant.settings, ...scenarioSettings(options.scenario) });
    this.settings =
      plan.maxAttempts === undefined ? base : { ...base, retry: { ...base.retry, maxAttempts: plan.maxAttempts } };
    this.limits = workerLimits([this.settings]);
    this.deadlineAt = T0 + this.settings.retry.deadlineSeconds * 1000;
    this.route = {
      worker: WORKER_ID,
      // As deployed: the schedule carries its worker's route, and neither the trigger nor the reconciler knows any.
      queueUrl: QUEUE_URL,
      stuckAfterSeconds: stuckAfterSeconds(this.limits),
      deadlineSeconds: this.settings.retry.deadlineSeconds,
      retentionDays: this.settings.retentionDays,
      ...(this.settings.catchupWindowSeconds === undefined
        ? {}
        : { catchupWindowSeconds: this.settings.catchupWindowSeconds }),
    };
    this.schedule = new FakeScheduleSwitch(
      () => this.vt.now,
      () => VirtualTime.actor()?.name ?? 'system',
    );
    const lastAfterMs = Math.max(
      0,
      ...(options.scenario?.others ?? []).map((o) => o.afterMs + (o.lateMs ?? 0)),
      ...(options.scenario?.operator ?? []).map((a) => a.atMs),
    );
    this.horizon = options.horizon ?? this.deadlineAt + lastAfterMs + finishBoundMs(this.limits);
    this.random = seededRandom(plan.seed);
    this.aws = sharedFakeAws(this.vt);
    this.observer = new ServiceObserver(this.aws, this.vt, T0, (who, what) => this.note(who, what));
    this.network = new Network(plan, this.vt, T0, this.observer, this);
    const clients = sdkClients();
    // Each client's send is typed per service; the network only needs the command's class and input.
    for (const client of [clients.doc, clients.s3, clients.sqs, clients.sns])
      this.network.intercept(client as unknown as SendingClient);
    this.handlers = this.createHandlers(clients, options);
    this.jobQueue = new JobQueue(
      this.vt,
      this.limits,
      this.random,
      (what) => this.note('sqs', what),
      (batch) => this.invokeWorker(batch),
    );
    this.aws.queueModel = {
      send: (body) => this.enqueue(body),
      changeVisibility: (receiptHandle, seconds) => this.jobQueue.changeVisibility(receiptHandle, seconds),
    };
    this.aws.onRowChange = (before, after) => this.rowChanged(before, after);
    multipartOf(this.aws, SIM_PART_BYTES.min);
    options.observe?.(this.aws, () => this.vt.now);
  }

  /** Deliver the schedule as planned and run until nothing is left to happen or the horizon. */
  async run(): Promise<WorldOutcome> {
    const occurrences = scenarioOccurrences(this.scenario);
    const firstKey = occurrences[0]?.scheduleKey;
    for (const [i, offset] of this.plan.schedulerDeliveries.entries())
      this.vt.scheduleSystem(offset, () => this.invokeTrigger(i + 1, 1, SCHEDULED_TIME, firstKey));
    // The scenario's other occurrences: each fires at its scheduled time (unless the schedule is disabled then), and
    // its one Scheduler delivery arrives lateMs later.
    for (let i = 1; i < occurrences.length; i++) {
      const { scheduledTime, scheduleKey } = occurrences[i];
      const at = Date.parse(scheduledTime) - T0;
      this.vt.scheduleSystem(at, () =>
        this.fire(1000 + i, scheduledTime, this.scenario?.others[i - 1]?.lateMs ?? 0, scheduleKey),
      );
    }
    for (const [i, action] of (this.scenario?.operator ?? []).entries())
      this.vt.scheduleSystem(action.atMs, () => this.invokeOperator(action, i + 1));
    this.vt.scheduleSystem(reconcilePhaseMs(this.plan), () => this.invokeReconciler());
    const uninstall = this.vt.install();
    try {
      await this.vt.runUntil(this.horizon);
    } finally {
      uninstall();
    }
    this.beliefs.endAll(this.vt.now);
    this.note(
      'sim',
      `run ended: row ${this.row()?.status ?? '(none)'}; ${this.jobQueue.size} message(s) left, ${this.jobQueue.movedToDlq} in the DLQ`,
    );
    return this.outcome();
  }

  // ---- the trace and the processes ------------------------------------------------------------------------------

  note(who: string, what: string): void {
    this.trace.push({ t: this.vt.now - T0, who, what });
  }

  /** The process died (a crash, a kill, a Lambda timeout): nothing of it runs any more. */
  kill(actor: Actor, why: string): void {
    if (actor.dead) return;
    actor.dead = true;
    this.killedAt.set(actor.name, this.vt.now);
    if (actor.kind === 'worker') this.workerCrashes++;
    this.beliefs.actorDied(actor, this.vt.now, why);
    this.note(actor.name, `DIES: ${why}`);
  }

  /** A long GC pause: the process's timers and responses wait until it resumes. */
  freeze(actor: Actor, ms: number): void {
    if (actor.dead) return;
    actor.frozenUntil = Math.max(actor.frozenUntil, this.vt.now + ms);
    this.maxFreezeMs = Math.max(this.maxFreezeMs, ms);
    this.note(actor.name, `FREEZES for ${ms} ms (GC pause)`);
  }

  faultAllowed(actor: Actor, fault: CallFault): boolean {
    if (actor.kind === 'trigger')
      return this.withinBound(this.triggerFailuresOf(actor) < BOUNDS.maxTriggerFailuresPerDelivery, 'triggerFaults');
    if (actor.kind === 'notifier')
      return this.withinBound(this.notifierFailures < BOUNDS.maxNotifierFailures, 'notifierFaults');
    if (fault.kind === 'crash-before' || fault.kind === 'crash-after')
      return this.withinBound(this.workerCrashes < BOUNDS.maxWorkerCrashes, 'crashes');
    return true;
  }

  /** A fault within its bound happens; one beyond it is skipped, and counted. */
  private withinBound(within: boolean, bound: keyof World['skipped']): boolean {
    if (!within) this.skipped[bound]++;
    return within;
  }

  private triggerFailuresOf(actor: Actor): number {
    const delivery = this.triggerDeliveryOf.get(actor);
    return delivery === undefined ? 0 : (this.triggerFailures.get(delivery) ?? 0);
  }

  private newActor(kind: ActorKind, skewMs = 0): Actor {
    return new Actor(kind, ++this.actorCounts[kind], skewMs);
  }

  /** The invocation returned: Lambda freezes its sandbox, so nothing of it runs any more. Not a crash. */
  private ended(actor: Actor): void {
    actor.dead = true;
  }

  // ---- the handlers, over the network, with the world's clock and log -------------------------------------------

  private createHandlers({ doc, s3, sqs, sns }: SdkClients, options: WorldOptions): Handlers {
    const clock: Clock = { now: () => this.vt.now + (VirtualTime.actor()?.skewMs ?? 0) };
    const logger: Logger = {
      // The world reads the steps the handlers log at DEBUG too ("claimed occurrence": an attempt's start).
      debug: (m, f) => this.onLog(m, f),
      info: (m, f) => this.onLog(m, f),
      warn: (m, f) => this.onLog(m, f),
      error: (m, f) => this.onLog(m, f),
    };
    const occurrences = scenarioOccurrences(options.scenario);
    const jobMs = new Map(
      occurrences.map((o, i) => [
        occurrenceIdOf(o),
        i === 0 ? this.plan.jobMs : (options.scenario?.others[i - 1]?.jobMs ?? 0),
      ]),
    );
    const job =
      options.job ?? modelJob(this.plan, this.vt, T0, this.sideEffects, (id) => jobMs.get(id) ?? this.plan.jobMs);
    const settings = new Map([[JOB_ID, this.settings]]);
    const store = new DynamoOccurrenceStore(doc, TABLE);
    const queue = new SqsWorkQueue(sqs, QUEUE_URL);
    const queues = new Map([[WORKER_ID, queue]]);
    const states = new DynamoJobStateStore(doc, TABLE);
    let leases = 0;
    let cancels = 0;
    return {
      // The keyed scenarios' keys, as the registry holds them: the trigger refuses a key it does not hold.
      trigger: createTriggerHandler({
        queueAt: (url) => queueAt(url, queue),
        store,
        clock,
        logger,
        registry: heldKeys(occurrences),
      }),
      pause: (note) => pauseJob({ states, clock, schedules: this.schedule }, JOB_ID, { note, by: OPERATOR }),
      cancel: (key, note) =>
        cancelOccurrence({ store: new OperatorOccurrenceStore(doc, TABLE), clock, newId: () => `${++cancels}` }, key, {
          by: OPERATOR,
          note,
        }),
      resume: () =>
        resumeJob(
          {
            states,
            clock,
            schedules: this.schedule,
            trigger: { store, queues, clock, logger },
            // The schedule is a cron (scheduleOf): only a rate(...) schedule reads the history for its phase.
            history: {
              newestFirst: () => Promise.reject(new Error('the simulated schedule is a cron: resume reads no history')),
            },
          },
          this.scheduledJob(),
          { by: OPERATOR },
        ),
      worker: createWorkerHandler({
        jobs: { [JOB_ID]: job },
        settings,
        store: this.variant.workerStore?.(doc, TABLE) ?? store,
        slots: new DynamoJobSlotStore(doc, TABLE),
        reports: new S3ReportStore(s3, BUCKET),
        runs: new DynamoRunStateStore(doc, TABLE),
        uploads: new S3MultipartUploads(s3, BUCKET, SIM_PART_BYTES),
        queue,
        clock,
        logger,
        random: options.jitter ?? this.random,
        newLeaseId: () => `lease-${++leases}`,
        // As the stack does: a switch only for a worker with a job that pauses after failures.
        ...(this.settings.pauseAfterFailures === undefined ? {} : { schedules: this.schedule }),
      }),
      notifier: createNotifierHandler({
        store,
        clock,
        logger,
        bucketName: BUCKET,
        announcer: new SnsAnnouncer(sns, TOPIC_ARN),
      }),
      reconciler: createReconcilerHandler({
        // The route each row records: the reconciler is told only the shortest threshold, as deployed.
        workers: routedWorkers({
          shortestStuckAfterSeconds: stuckAfterSeconds(this.limits),
          queueAt: (url) => queueAt(url, queue),
        }),
        thresholds: reconcileThresholds([this.settings]),
        store,
        index: new DynamoOccurrenceReader(doc, TABLE),
        announcer: new SnsAnnouncer(sns, TOPIC_ARN),
        clock,
        logger,
        bucketName: BUCKET,
      }),
    };
  }

  /** Every log line goes to the trace; a worker's lines about its lease start and end its belief that it holds it. */
  private onLog(message: string, fields: Record<string, unknown> = {}): void {
    const actor = VirtualTime.actor();
    const leaseId = fields.leaseId as string | undefined;
    this.note(actor?.name ?? '?', `log: ${message}${fields.error ? ` (${String(fields.error).slice(0, 140)})` : ''}`);
    if (actor !== undefined && leaseId !== undefined) this.beliefs.onLog(actor, leaseId, message, this.vt.now);
    const scheduledTime = fields.scheduledTime as string | undefined;
    if (message !== 'claimed occurrence' || scheduledTime === undefined) return;
    const time = occurrenceIdOf({ scheduledTime, scheduleKey: fields.scheduleKey as string | undefined });
    if (!this.firstStartedAt.has(time)) this.firstStartedAt.set(time, this.vt.now);
    if (leaseId !== undefined) this.runStarts.push({ leaseId, scheduledTime: time, at: this.vt.now });
  }

  // ---- the trigger, invoked by the Scheduler ----------------------------------------------------------------------

  private invokeTrigger(delivery: number, tryNo: number, scheduledTime = SCHEDULED_TIME, scheduleKey?: string): void {
    const invocation: Invocation = { actor: this.newActor('trigger'), settled: false };
    const { actor } = invocation;
    this.triggerDeliveryOf.set(actor, delivery);
    this.note(actor.name, `invoked (Scheduler delivery ${delivery}, try ${tryNo})`);
    const fail = (why: string) => this.triggerFailed(invocation, delivery, tryNo, why, scheduledTime, scheduleKey);
    const key =
      scheduleKey === undefined ? { jobId: JOB_ID, scheduledTime } : { jobId: JOB_ID, scheduleKey, scheduledTime };
    this.vt.scheduleSystem(TRIGGER_TIMEOUT_MS, () => fail('trigger timed out'));
    this.vt
      .runAs(actor, () => this.handlers.trigger(scheduleEventOf(key, this.route)))
      .then(
        (result) => this.triggerReturned(invocation, result),
        (error) => fail(`trigger failed: ${String(error).slice(0, 120)}`),
      );
  }

  private triggerReturned(invocation: Invocation, result: string): void {
    if (invocation.settled || invocation.actor.dead) return;
    invocation.settled = true;
    this.note(invocation.actor.name, `returned ${result}`);
    this.ended(invocation.actor);
  }

  /** Lambda retries a failed asynchronous invocation twice, then sends the event to the trigger's DLQ. */
  private triggerFailed(
    invocation: Invocation,
    delivery: number,
    tryNo: number,
    why: string,
    scheduledTime: string,
    scheduleKey?: string,
  ): void {
    if (invocation.settled) return;
    invocation.settled = true;
    this.kill(invocation.actor, why);
    this.triggerFailures.set(delivery, (this.triggerFailures.get(delivery) ?? 0) + 1);
    const retryIn = TRIGGER_RETRY_DELAYS_MS[tryNo - 1];
    if (retryIn === undefined) {
      this.triggerEventsDropped++;
      this.note('lambda', `trigger event of delivery ${delivery} sent to the trigger DLQ after ${tryNo} tries`);
    } else {
      this.vt.scheduleSystem(retryIn, () => this.invokeTrigger(delivery, tryNo + 1, scheduledTime, scheduleKey));
    }
  }

  /**
   * One reconciler run, as deployed (every 5 minutes, the stack's thresholds), under its own actor (no plan faults
   * it); a failed run is only noted (the next one retries).
   */
  private invokeReconciler(): void {
    if (this.vt.now + RECONCILE_EVERY_MS <= this.horizon)
      this.vt.scheduleSystem(RECONCILE_EVERY_MS, () => this.invokeReconciler());
    // A run is 128 index queries (one per open shard) through the SDK, the simulation's slowest part: it runs in full only when it has
    // something to fix, judged by its own tests on the rows as they are now (the same clock, the same thresholds).
    // A run left out would have read the index, found no row stuck for long enough and nothing unannounced, and
    // written nothing.
    this.reconcilerTicks++;
    if (!this.reconcilerHasWork()) return;
    this.reconcilerRuns++;
    const actor = this.newActor('reconciler');
    this.note(actor.name, 'invoked (every 5 minutes)');
    this.vt
      .runAs(actor, () => this.handlers.reconciler())
      .then(
        (report) => {
          this.reconcilerRequeues += report.fixed.filter((f) => f.action === 'requeued').length;
          this.note(actor.name, `returned: ${report.fixed.length} fixed`);
        },
        (error) => this.note(actor.name, `threw ${String(error).slice(0, 120)}`),
      )
      .finally(() => this.ended(actor));
  }

  /** Whether a reconciler run now would re-enqueue or announce an occurrence of the scenario (reconcile.ts's tests). */
  private reconcilerHasWork(): boolean {
    const now = this.vt.now;
    const stuckAfter = stuckAfterSeconds(this.limits);
    const { unannouncedAfterSeconds } = reconcileThresholds([this.settings]);
    return scenarioOccurrences(this.scenario).some((o) => {
      const row = this.aws.row(seriesOf({ jobId: JOB_ID, ...o }), o.scheduledTime) as unknown as Occurrence | undefined;
      return (
        row !== undefined &&
        (stuckReason(row, now, stuckAfter) !== undefined || isUnannounced(row, now, unannouncedAfterSeconds))
      );
    });
  }

  // ---- the schedule and the operator -----------------------------------------------------------------------------

  /** A fire time of the schedule: held back while the schedule is disabled, else delivered `lateMs` later. */
  private fire(delivery: number, scheduledTime: string, lateMs: number, scheduleKey?: string): void {
    // A key's schedule is the registry's: a pause of the whole job disables only its template, and the keys' schedules
    // keep firing (their occurrences are SKIPPED as paused by the worker).
    if (scheduleKey === undefined && !this.schedule.enabled) {
      this.firesHeldBack.push({ scheduledTime, at: this.vt.now });
      this.note('scheduler', `${scheduledTime} not fired: the schedule is disabled`);
      return;
    }
    if (lateMs > 0) this.note('scheduler', `${scheduledTime} fired; its delivery is ${lateMs} ms late`);
    this.vt.scheduleSystem(lateMs, () => this.invokeTrigger(delivery, 1, scheduledTime, scheduleKey));
  }

  /** The deployed job as the operator's resume reads it from Scheduler. */
  private scheduledJob(): DeployedJob {
    const state = this.schedule.enabled ? 'ENABLED' : 'DISABLED';
    if (this.scenario?.keys !== undefined)
      // A job that takes schedules at run time: its own schedule is the DISABLED template, which a resume leaves so
      // and has no fire times to catch up on (each key's schedule retries its own).
      return {
        id: JOB_ID,
        schedule: 'rate(1 day)',
        timeZone: 'UTC',
        state,
        route: this.route,
        runtimeScheduleGroup: JOB_ID,
      };
    return { id: JOB_ID, schedule: scheduleOf(this.scenario), timeZone: 'UTC', state, route: this.route };
  }

  /** The operator's pause or resume, in its own process (no plan faults it), racing the workers' writes. */
  private invokeOperator(action: OperatorAction, index: number): void {
    if (action.action === 'cancel') {
      this.invokeCancel(action, index);
      return;
    }
    const actor = this.newActor('operator');
    const note = action.action === 'pause' ? pauseNoteOf(index) : undefined;
    const record: OperatorRecord = { action: action.action, at: this.vt.now, ...(note && { note }) };
    this.operatorActions.push(record);
    this.note(actor.name, `invoked: ${action.action}`);
    this.vt
      .runAs(actor, () => (note === undefined ? this.handlers.resume() : this.handlers.pause(note)))
      .then(
        (result) => {
          record.outcome = result.outcome;
          record.state = result.state as Row | undefined;
          this.note(actor.name, `returned ${result.outcome}`);
        },
        (error) => {
          record.error = String(error).slice(0, 200);
          this.note(actor.name, `threw ${record.error}`);
        },
      )
      .finally(() => {
        record.endedAt = this.vt.now;
        this.ended(actor);
      });
  }

  /** The operator's cancel of one occurrence, in its own process (no plan faults it), racing the workers. */
  private invokeCancel(action: OperatorAction, index: number): void {
    const actor = this.newActor('operator');
    const occurrences = scenarioOccurrences(this.scenario);
    const target = occurrences[(action.target ?? 0) % occurrences.length];
    const record: OperatorRecord = { action: 'cancel', at: this.vt.now, target: occurrenceIdOf(target) };
    this.operatorActions.push(record);
    this.note(actor.name, `invoked: cancel ${record.target}`);
    const key = { ...seriesKeyOf(seriesOf({ jobId: JOB_ID, ...target })), scheduledTime: target.scheduledTime };
    this.vt
      .runAs(actor, () => this.handlers.cancel(key, `operator action ${index}`))
      .then(
        (result) => {
          record.outcome = result.outcome;
          this.note(
            actor.name,
            `returned ${result.outcome}${result.outcome === 'refused' ? `: ${result.reason}` : ''}`,
          );
        },
        (error) => {
          record.error = String(error).slice(0, 200);
          this.note(actor.name, `threw ${record.error}`);
        },
      )
      .finally(() => {
        record.endedAt = this.vt.now;
        this.ended(actor);
      });
  }

  /** A write that claimed the occurrence under a new lease, and the first that made its row terminal. */
  private noteClaimAndEnd(before: Row | undefined, after: Row, time: string): void {
    const leaseId = after.leaseId as string | undefined;
    const claimed =
      after.status === 'RUNNING' &&
      leaseId !== undefined &&
      leaseId !== before?.leaseId &&
      !leaseId.startsWith(REVOKED_LEASE_PREFIX);
    if (claimed && !this.leaseClaims.has(leaseId))
      this.leaseClaims.set(leaseId, { scheduledTime: time, at: this.vt.now });
    if (TERMINAL.has(String(after.status)) && !this.terminalAt.has(time)) this.terminalAt.set(time, this.vt.now);
    const seen = this.statusesSeen.get(time) ?? new Set<string>();
    this.statusesSeen.set(time, seen.add(String(after.status)));
    const cancelledNow = after.status === 'CANCELLED' && before?.status !== 'CANCELLED';
    if (cancelledNow && after.cancelledByOperator !== undefined) this.operatorCancelledAt.set(time, this.vt.now);
  }

  // ---- the job queue and the worker ---------------------------------------------------------------------------

  /** SendMessage reached the queue; SQS delivers at least once: the plan's extra copies of the first message. */
  private enqueue(body: string): void {
    const id = this.jobQueue.send(body);
    this.note('sqs', `${id} enqueued`);
    if (id !== 'msg-1') return;
    for (const after of this.plan.sqsDuplicates) this.vt.scheduleSystem(after, () => this.sendDuplicate(body));
  }

  private sendDuplicate(body: string): void {
    const id = this.jobQueue.send(body);
    this.note('sqs', `${id}: a duplicate copy of msg-1 (at-least-once delivery)`);
  }

  /** The poller hands the worker a batch, on a clock with the plan's next skew, killed at its function timeout. */
  private invokeWorker(received: Received[]): void {
    const index = this.actorCounts.worker + 1;
    const actor = this.newActor('worker', this.plan.skewsMs[(index - 1) % this.plan.skewsMs.length] ?? 0);
    this.workerSkews.push(actor.skewMs);
    const batch = received.map((r) => `${r.id} (receive ${r.receiveCount})`).join(', ');
    this.note(actor.name, `invoked with ${batch}; clock ${actor.skewMs >= 0 ? '+' : ''}${actor.skewMs} ms`);
    const timeoutAt = this.vt.now + this.limits.functionTimeoutSeconds * 1000;
    this.vt.scheduleSystem(timeoutAt - this.vt.now, () => this.kill(actor, 'Lambda timeout'));
    this.scheduleWorkerFaults(actor);
    const event = sqsEvent(received.map((r) => ({ messageId: r.id, receiptHandle: r.receipt, body: r.body })));
    const context = {
      getRemainingTimeInMillis: () => Math.max(0, timeoutAt - this.vt.now),
      logStreamName: `worker/${actor.index}`,
      awsRequestId: `req-${actor.index}`,
    };
    this.vt
      .runAs(actor, () => this.handlers.worker(event, context))
      .then(
        (response) => this.workerReturned(actor, received, response),
        (error) => {
          this.note(actor.name, `threw ${String(error)}`);
          this.ended(actor);
        },
      );
  }

  /** The plan's timed kills and freezes of this invocation. */
  private scheduleWorkerFaults(actor: Actor): void {
    for (const c of this.plan.crashes.filter((x) => x.invocation === actor.index)) {
      this.vt.scheduleSystem(c.atMs, () => {
        if (actor.dead) return;
        if (this.withinBound(this.workerCrashes < BOUNDS.maxWorkerCrashes, 'crashes'))
          this.kill(actor, `killed ${c.atMs} ms into the invocation`);
      });
    }
    for (const f of this.plan.freezes.filter((x) => x.invocation === actor.index))
      this.vt.scheduleSystem(f.atMs, () => this.freeze(actor, f.forMs));
  }

  /** Lambda deletes the messages the batch response did not report as failed. */
  private workerReturned(actor: Actor, received: Received[], response: Awaited<ReturnType<WorkerHandler>>): void {
    if (actor.dead) return;
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const r of received) {
      if (!failed.has(r.id) && this.jobQueue.delete(r.id, r.receipt)) this.note('sqs', `${r.id} deleted`);
    }
    this.note(actor.name, `returned${failed.size ? `; batch item failures: ${[...failed].join(', ')}` : ''}`);
    this.ended(actor);
  }

  // ---- the table stream and the notifier ------------------------------------------------------------------------

  /** The stack's event source filter: only the write that makes a row SUCCEEDED reaches the notifier. */
  private rowChanged(before: Row | undefined, after: Row): void {
    // The job-state row (the running slot) has no status and no index key: the stream filter never passes it.
    if (isJobStateKey(after as unknown as OccurrenceKey)) return;
    this.observer.rowWritten(after);
    const time = rowIdOf(after);
    if (after.status === 'BUFFERED' && !this.firstBufferedAt.has(time)) this.firstBufferedAt.set(time, this.vt.now);
    this.noteClaimAndEnd(before, after, time);
    // The reconciler and the CLI find a row by its status only through this key: OPEN#k while in flight or
    // unannounced, none once the success is announced, the status's own for FAILED, SKIPPED and CANCELLED.
    // The row as the table holds it names its series in jobId: read it back as the protocol sees it.
    const row = fromTableItem(after as unknown as Occurrence);
    const expected = expectedStatusShard(row);
    if (after.statusShard !== expected) {
      const notified = after.notifiedAt === undefined ? '' : ', announced';
      this.indexKeyMismatches.push(
        `${String(after.status)}${notified} row with index key ${String(after.statusShard ?? '(none)')} (expected ${expected ?? '(none)'}) at +${((this.vt.now - T0) / 1000).toFixed(3)} s`,
      );
    }
    if (after.status === 'SUCCEEDED' && before?.status !== 'SUCCEEDED') {
      const record = streamEvent(structuredClone(before), structuredClone(after));
      this.vt.scheduleSystem(STREAM_DELAY_MS, () => this.invokeNotifier(record));
    }
  }

  private invokeNotifier(record: StreamRecord): void {
    const invocation: Invocation = { actor: this.newActor('notifier'), settled: false };
    const { actor } = invocation;
    this.streamTries++;
    this.note(actor.name, `invoked with the stream record of the change to SUCCEEDED (try ${this.streamTries})`);
    const retry = (why: string) => this.retryNotifier(invocation, record, why);
    this.vt.scheduleSystem(NOTIFIER_TIMEOUT_MS, () => retry('notifier timed out'));
    this.vt
      .runAs(actor, () => this.handlers.notifier(record))
      .then(
        (response) => this.notifierReturned(invocation, record, response),
        (error) => retry(`notifier threw ${String(error)}`),
      );
  }

  private notifierReturned(
    invocation: Invocation,
    record: StreamRecord,
    response: Awaited<ReturnType<Handlers['notifier']>>,
  ): void {
    if (invocation.settled || invocation.actor.dead) return;
    if (response.batchItemFailures.length > 0) {
      this.retryNotifier(invocation, record, 'batch item failure');
      return;
    }
    invocation.settled = true;
    this.note(invocation.actor.name, 'returned');
    this.ended(invocation.actor);
  }

  /** The stream retries a failed batch with backoff, 2, 4, 8 ... 60 s, until it succeeds. */
  private retryNotifier(invocation: Invocation, record: StreamRecord, why: string): void {
    if (invocation.settled) return;
    invocation.settled = true;
    this.kill(invocation.actor, why);
    this.notifierFailures++;
    this.vt.scheduleSystem(Math.min(60_000, 1000 * 2 ** this.streamTries), () => this.invokeNotifier(record));
  }

  // ---- the outcome ----------------------------------------------------------------------------------------------

  private row(): Row | undefined {
    return this.aws.row(JOB_ID, SCHEDULED_TIME);
  }

  private outcome(): WorldOutcome {
    const o = this.observer;
    const skews = this.workerSkews;
    return {
      plan: this.plan,
      variant: this.variant.name,
      settings: this.settings,
      limits: this.limits,
      trace: this.trace,
      row: this.row(),
      rows: scenarioOccurrences(this.scenario).map((o) =>
        this.aws.row(seriesOf({ jobId: JOB_ID, ...o }), o.scheduledTime),
      ),
      jobState: this.aws.row(JOB_ID, '#job'),
      firstBufferedAt: this.firstBufferedAt,
      firstStartedAt: this.firstStartedAt,
      announcedTimes: this.aws.delivered.map((m) => {
        const message = JSON.parse(m.Message) as { scheduledTime?: unknown; scheduleKey?: unknown };
        const scheduleKey = typeof message.scheduleKey === 'string' ? message.scheduleKey : undefined;
        return occurrenceIdOf({ scheduledTime: String(message.scheduledTime), scheduleKey });
      }),
      objects: this.aws.objects,
      published: this.aws.published.length,
      delivered: this.aws.delivered.length,
      deadlineAt: this.deadlineAt,
      horizon: this.horizon,
      messagesInDlq: this.jobQueue.movedToDlq,
      skewSpreadMs: skews.length === 0 ? 0 : Math.max(...skews) - Math.min(...skews),
      events: this.vt.events,
      overwrites: o.overwrites,
      firstCommitAt: o.firstCommitAt,
      staleWrites: o.staleWrites,
      indexKeyMismatches: this.indexKeyMismatches,
      lateUncontestedWrites: o.lateUncontestedWrites,
      sideEffects: this.sideEffects,
      beliefs: this.beliefs.all,
      calls: this.network.calls,
      finishedAt: o.finishedAt,
      leaseExpiries: o.leaseExpiries,
      workerCrashes: this.workerCrashes,
      maxFreezeMs: this.maxFreezeMs,
      triggerEventsDropped: this.triggerEventsDropped,
      reconcilerTicks: this.reconcilerTicks,
      reconcilerRuns: this.reconcilerRuns,
      reconcilerRequeues: this.reconcilerRequeues,
      claims: o.claims,
      claimsApplied: o.claimsApplied,
      skipped: this.skipped,
      jobStateWrites: o.jobStateWrites,
      scheduleChanges: this.schedule.changes,
      firesHeldBack: this.firesHeldBack,
      operatorActions: this.operatorActions,
      runStarts: this.runStarts,
      leaseClaims: this.leaseClaims,
      terminalAt: this.terminalAt,
      operatorCancelledAt: this.operatorCancelledAt,
      statusesSeen: this.statusesSeen,
      commitsAt: o.commitsAt,
      killedAt: this.killedAt,
    };
  }
}

function sqsEvent(records: { messageId: string; receiptHandle: string; body: string }[]): SQSEvent {
  return { Records: records.map((r) => ({ ...r, eventSource: 'aws:sqs' })) } as unknown as SQSEvent;
}
