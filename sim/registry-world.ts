/**
 * The registry world: the schedules one job takes at run time, written by the user's app and kept by the reconciler,
 * on virtual time, with the real code over the fakes: manage-schedule.ts (upsert, pause, resume, delete) and
 * reconcile-schedules.ts (the sweep and the rolling audit) on the real DynamoDB registry store and Scheduler
 * projection, over FakeAws's registry table (two sparse GSIs) and the fake Scheduler (sim/fakes/fake-scheduler.ts),
 * every call through the simulation's network (sim/network.ts) with the plan's faults.
 *
 * A plan (RegistryPlan) is: N keys of one job; upserts, updates, pauses, resumes and deletes of them, each by its own
 * app process at its time (several at once race on one key); faults of any of their calls (a throttle, a call that
 * fails before it is applied, a response lost after it was applied, a slow call, a process that dies before or after
 * a call: between the registry write and the Scheduler write, say); hand edits of Scheduler (a schedule deleted,
 * disabled or edited in the console, an orphan created with a name of any shape in the group of any of the stack's
 * run-time-schedule jobs, the job's template redeployed); and the reconciler, as deployed, every 5 minutes from a
 * phase drawn per plan, auditing K slices of every job's group per run (1 to 10 jobs: the plan's job and up to 9
 * others with no rows), whose first runs the plan may fault too.
 *
 * Invariants (checked at the horizon: the last change, then two full audit cycles and two periods):
 *   S1 convergence: every live registry row (not a tombstone, not a finished at() or end date) has exactly one
 *      Scheduler schedule in the job's group, matching it: state, expression, time zone, start and end, the input
 *      (the template's event with the key and the row's input), ActionAfterCompletion
 *   S2 no schedule in the job's group without a live row
 *   S3 no tombstone left, no row still due for its projection
 *   S4 an upsert, pause or resume that returned success is in the row's history: what it asked for was written (by
 *      it, when it says it wrote; an upsert that says `unchanged` wrote nothing, in the registry or Scheduler) before it returned (what it returns may be a racing writer's newer row);
 *      the last change of a key that nothing raced is what the row holds at the end (last writer wins); a delete
 *      that was the last change of its key leaves no row
 *   S5 every put of a row raises its version by one; a call refused for bad input wrote nothing
 *   S6 a pause, resume or delete changes only the state of the row it replaces (no lost update)
 *   S7 the repair bound, per stack: an orphan made after the plan's faulted reconciler runs, whatever its name and
 *      whichever job's group it is in, is gone within repairBoundRuns (18) reconciler periods and a run's timeout
 */
import fc from 'fast-check';
import { DynamoAuditCursorStore } from '../functions/aws/audit-cursor-store';
import { withDatedTemplates } from '../functions/aws/dated-templates';
import { DynamoScheduleRegistry, rowOf } from '../functions/aws/schedule-registry-store';
import { SchedulerProjection } from '../functions/aws/scheduler-projection';
import {
  AUDIT_SLICES,
  auditWindow,
  bucketsOfSlice,
  DEFAULT_AUDIT_SLICES_PER_RUN,
  repairBoundRuns,
  runsPerCycle,
} from '../functions/protocol/audit-slices';
import {
  deleteScheduleRecord,
  type ManageScheduleDeps,
  rememberingTemplates,
  setScheduleState,
  upsertScheduleRecord,
} from '../functions/protocol/manage-schedule';
import type { Clock, Logger, Metrics } from '../functions/protocol/ports';
import {
  EDITED_BY_HAND_MARGIN_MS,
  reconcileSchedules,
  type ScheduleReconcileReport,
} from '../functions/protocol/reconcile-schedules';
import {
  auditBucketKey,
  DEFAULT_SCHEDULE_TIME_ZONE,
  isFinished,
  REGISTRY_TABLE,
  sameJson,
  scheduleNameOf,
} from '../functions/protocol/schedule-registry';
import type {
  RegisteredSchedule,
  ScheduleProjection,
  ScheduleSpec,
} from '../functions/protocol/schedule-registry-ports';
import { RECONCILE_EVERY_MINUTES } from '../functions/protocol/worker-limits';
import type { SdkCommand } from './calls';
import { checkPlans } from './check-plans';
import type { Row } from './fakes/dynamo-expressions';
import type { FakeAws } from './fakes/fake-aws';
import type { FakeSchedule, FakeScheduler } from './fakes/fake-scheduler';
import type { FakeTable } from './fakes/fake-table';
import { type Applier, Network, type NetworkHost, type SendingClient } from './network';
import type { TraceLine } from './outcome';
import type { CallFault } from './plan';
import { sdkClients, sharedFakeAws, sharedFakeScheduler } from './sdk-clients';
import type { Applied } from './service-observer';
import { Actor, VirtualTime } from './virtual-time';

export const REGISTRY_JOB = 'report';
/** The job's own schedule group (its run-time schedules), and the stack's shared group (the job's template). */
export const KEYED_GROUP = 'report-keyed';
export const SHARED_GROUP = 'stack-schedules';
const REGISTRY_TABLE_NAME = 'schedule-registry';
export const REGISTRY_T0 = Date.parse('2026-12-01T00:00:00Z');
const PERIOD_MS = RECONCILE_EVERY_MINUTES * 60_000;
/** The audit's K as deployed. */
export const AUDIT_SLICES_PER_RUN = DEFAULT_AUDIT_SLICES_PER_RUN;
/** Runs of the reconciler for one full audit cycle of every job. */
export const RUNS_PER_CYCLE = runsPerCycle(AUDIT_SLICES_PER_RUN);
/** S7: how long after it an orphan may stay, at most: the audit's repair bound in periods, and a run's timeout. */
export const REPAIR_BOUND_MS = repairBoundRuns(AUDIT_SLICES_PER_RUN) * PERIOD_MS + 120_000;
/** The other run-time-schedule jobs of the stack a plan may have (no rows; orphans only), beside REGISTRY_JOB. */
export const MAX_OTHER_JOBS = 9;
const otherJobId = (i: number) => `job-${String(i + 1).padStart(2, '0')}`;
const groupOf = (jobId: string) => `${jobId}-keyed`;
/**
 * Hand-made names of an orphan, of any shape: made in the console or by another tool, not by the registry (its names
 * are `bb.…`). Among them the first characters that no registry name has, a hex digit followed by no bucket, and one
 * that looks like a bucket without the dot.
 */
export const STRAY_NAMES = ['hand-made-by-ops', 'A', 'Zeta-1', '_tmp', '-x', '.x', 'a-ops', 'deadbeef', 'a3', 'q'];
/** Reconciler invocations the plan may fault (the first ones); later runs are clean, so that the state converges. */
export const FAULTED_RECONCILER_RUNS = 4;
/** How long after its start an op of the app may still be applying a request (the slowest call, and then some). */
const OP_SETTLE_MS = 120_000;
/** The reconciler function's timeout as the stack deploys it (lib/occurrence-functions.ts RECONCILER_TIMEOUT_SECONDS). */
const RECONCILER_TIMEOUT_SECONDS = 120;
const TRIGGER_ARN = 'arn:aws:lambda:eu-central-1:123456789012:function:trigger';

/** The keys a plan draws from: in different audit buckets, some with the characters a name must replace. */
export const KEYS = ['c0', 'tenant:42', 'user@example.com', 'c3', 'c4'] as const;

const iso = (ms: number) => new Date(ms).toISOString();
const wall = (ms: number) => iso(ms).slice(0, 19);

/**
 * The specs a plan's upserts ask for: valid ones (cron and rate in several zones, with input, created paused, with a
 * start and an end, an at() that fires during the run, an end date that passes during it), then invalid ones (a bad
 * zone, an at() in the past) that must be refused with nothing written.
 */
export const SPECS: readonly ScheduleSpec[] = [
  { expression: 'cron(0 8 ? * MON *)', timeZone: 'Europe/Berlin', input: { plan: 'pro', locale: 'de' } },
  { expression: 'rate(1 day)' },
  { expression: 'cron(30 6 * * ? *)', timeZone: 'America/New_York', enabled: false, description: 'paused at sign-up' },
  {
    expression: 'rate(7 days)',
    startDate: iso(REGISTRY_T0 + 86_400_000),
    endDate: iso(REGISTRY_T0 + 30 * 86_400_000),
    input: { weeks: [1, 2, 3] },
  },
  { expression: `at(${wall(REGISTRY_T0 + 90 * 60_000)})`, timeZone: 'Etc/UTC', input: { once: true } },
  { expression: 'cron(0 * * * ? *)', endDate: iso(REGISTRY_T0 + 2 * 3_600_000) },
  { expression: 'rate(1 day)', startDate: iso(REGISTRY_T0 - 3_600_000), timeZone: 'Asia/Tokyo' },
  // Invalid: nothing may be written.
  { expression: 'rate(1 day)', timeZone: 'Mars/Olympus_Mons' },
  { expression: `at(${wall(REGISTRY_T0 - 3_600_000)})` },
];
/** SPECS from this index on are invalid. */
export const FIRST_INVALID_SPEC = 7;

export type RegistryOpKind = 'upsert' | 'pause' | 'resume' | 'delete';

/** One call of the app, in its own process, at atMs after T0; ops with one `caller` share its template cache. */
export interface RegistryOp {
  readonly atMs: number;
  readonly caller: number;
  readonly key: number;
  readonly op: RegistryOpKind;
  /** The SPECS index an upsert asks for. */
  readonly spec: number;
}

export type HandEditKind = 'delete' | 'disable' | 'edit' | 'orphan' | 'redeploy';

/** A change of Scheduler behind the registry's back, at atMs after T0. */
export interface HandEdit {
  readonly atMs: number;
  readonly key: number;
  readonly edit: HandEditKind;
  /**
   * An orphan's: the job whose group gets it (0: REGISTRY_JOB, i: the plan's other job i, modulo), and, when set, its
   * name (a STRAY_NAMES index, modulo) instead of one shaped like the registry's.
   */
  readonly job?: number;
  readonly stray?: number;
}

export interface RegistryPlan {
  readonly seed: number;
  /** Keys of the job in play: KEYS[0 .. keys-1]. */
  readonly keys: number;
  readonly ops: readonly RegistryOp[];
  readonly edits: readonly HandEdit[];
  /** The `call`-th call of the `invocation`-th app process or reconciler run (the first FAULTED_RECONCILER_RUNS). */
  readonly callFaults: readonly {
    readonly actor: 'app' | 'reconciler';
    readonly invocation: number;
    readonly call: number;
    readonly fault: CallFault;
  }[];
  /** When the reconciler first runs, ms after T0 (its rule's phase). */
  readonly phaseMs: number;
  /** The stack's other run-time-schedule jobs (0 to MAX_OTHER_JOBS), which the reconciler audits too. */
  readonly otherJobs?: number;
}

// ---- plans ---------------------------------------------------------------------------------------------------------

const appFault: fc.Arbitrary<CallFault> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'throttled' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'transient' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'lost-error' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'lost-retried' } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: 'crash-before' } as const) },
  { weight: 3, arbitrary: fc.constant({ kind: 'crash-after' } as const) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 40_000 }).map((ms) => ({ kind: 'slow', ms }) as const) },
);

const opKind: fc.Arbitrary<RegistryOpKind> = fc.oneof(
  { weight: 5, arbitrary: fc.constant('upsert' as const) },
  { weight: 2, arbitrary: fc.constant('pause' as const) },
  { weight: 2, arbitrary: fc.constant('resume' as const) },
  { weight: 2, arbitrary: fc.constant('delete' as const) },
);

const specIndex = fc.oneof(
  { weight: 9, arbitrary: fc.integer({ min: 0, max: FIRST_INVALID_SPEC - 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: FIRST_INVALID_SPEC, max: SPECS.length - 1 }) },
);

const handEditKind: fc.Arbitrary<HandEditKind> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('delete' as const) },
  { weight: 2, arbitrary: fc.constant('disable' as const) },
  { weight: 2, arbitrary: fc.constant('edit' as const) },
  { weight: 2, arbitrary: fc.constant('orphan' as const) },
);

/**
 * Ops within 20 minutes, often in bursts (several within a second, on the same key: racing writers), by one to three
 * callers; hand edits within 40 minutes; faults of the app's first calls and of the reconciler's first runs. With
 * `redeploy`, one edit in ten is a deployment that changes the job's template (see found-bugs: the audit does not
 * find schedules projected from an older template, so those plans are kept apart until it does).
 */
export function registryPlans(options: { readonly redeploy?: boolean } = {}): fc.Arbitrary<RegistryPlan> {
  const editKind = options.redeploy
    ? fc.oneof({ weight: 9, arbitrary: handEditKind }, { weight: 1, arbitrary: fc.constant('redeploy' as const) })
    : handEditKind;
  return fc
    .record({
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      keys: fc.integer({ min: 1, max: KEYS.length }),
      ops: fc.array(
        fc.record({
          atMs: fc.oneof(fc.integer({ min: 0, max: 1_200_000 }), fc.integer({ min: 0, max: 2_000 })),
          caller: fc.integer({ min: 1, max: 3 }),
          key: fc.nat(),
          op: opKind,
          spec: specIndex,
        }),
        { minLength: 1, maxLength: 10 },
      ),
      edits: fc.array(
        fc.record(
          {
            atMs: fc.integer({ min: 0, max: 2_400_000 }),
            key: fc.nat(),
            edit: editKind,
            job: fc.nat({ max: MAX_OTHER_JOBS }),
            stray: fc.nat({ max: STRAY_NAMES.length - 1 }),
          },
          { requiredKeys: ['atMs', 'key', 'edit'] },
        ),
        { maxLength: 3 },
      ),
      otherJobs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: MAX_OTHER_JOBS })),
      callFaults: fc.array(
        fc.oneof(
          {
            weight: 4,
            arbitrary: fc.record({
              actor: fc.constant('app' as const),
              invocation: fc.integer({ min: 1, max: 10 }),
              call: fc.integer({ min: 1, max: 8 }),
              fault: appFault,
            }),
          },
          {
            weight: 1,
            arbitrary: fc.record({
              actor: fc.constant('reconciler' as const),
              invocation: fc.integer({ min: 1, max: FAULTED_RECONCILER_RUNS }),
              call: fc.integer({ min: 1, max: 40 }),
              fault: appFault,
            }),
          },
        ),
        { maxLength: 6 },
      ),
      phaseMs: fc.integer({ min: 0, max: PERIOD_MS - 1 }),
    })
    .map((p) => ({
      ...p,
      ops: p.ops.map((o) => ({ ...o, key: o.key % p.keys })).sort((a, b) => a.atMs - b.atMs),
      edits: p.edits.map((e) => ({ ...e, key: e.key % p.keys })).sort((a, b) => a.atMs - b.atMs),
    }));
}

/** The plans of `npm run sim:registry`: everything but a redeployed template. */
export const registryPlan: fc.Arbitrary<RegistryPlan> = registryPlans();

/** When the last change of the plan (an op's settling, a hand edit, a faulted reconciler run) can happen, ms after T0. */
export function lastChangeMs(plan: RegistryPlan): number {
  return Math.max(
    0,
    ...plan.ops.map((o) => o.atMs + OP_SETTLE_MS),
    ...plan.edits.map((e) => e.atMs),
    ...plan.callFaults
      .filter((f) => f.actor === 'reconciler')
      .map((f) => plan.phaseMs + (f.invocation - 1) * PERIOD_MS + RECONCILER_TIMEOUT_SECONDS * 1000),
  );
}

/**
 * The bound S1-S3 are checked at, after the last change: a full audit cycle and two periods (the sweep's grace, the
 * run in flight); with an orphan in the plan, two cycles (an orphan younger than the audit's minimum age when its
 * bucket comes round waits for the next cycle).
 */
export function convergenceBoundMs(plan?: RegistryPlan): number {
  const cycles = plan === undefined || plan.edits.some((e) => e.edit === 'orphan') ? 2 : 1;
  return (cycles * RUNS_PER_CYCLE + 2) * PERIOD_MS;
}

// ---- the run -------------------------------------------------------------------------------------------------------

/** One app call as the app saw it. */
export interface OpRecord {
  readonly index: number;
  readonly op: RegistryOp;
  readonly actor: string;
  readonly startedAt: number;
  endedAt?: number;
  /** 'created', 'updated', 'unchanged', 'paused', 'resumed', 'deleted', 'absent', or the error's name. */
  outcome?: string;
  ok?: boolean;
  /** The row the call returned (upsert, pause, resume). */
  returned?: RegisteredSchedule;
  killed?: boolean;
}

/** One applied write of the registry table. */
export interface RegistryWrite {
  readonly at: number;
  readonly who: string;
  readonly op: string;
  readonly before: Row | undefined;
  readonly after: Row | undefined;
}

export interface RegistryOutcome {
  readonly plan: RegistryPlan;
  readonly trace: TraceLine[];
  readonly horizon: number;
  readonly ops: readonly OpRecord[];
  readonly writes: readonly RegistryWrite[];
  /** The registry rows and the job group's schedules at the end. */
  readonly rows: readonly RegisteredSchedule[];
  readonly schedules: readonly FakeSchedule[];
  /** The template's event at the end (what every schedule's input must carry). */
  readonly templateEvent: Record<string, unknown>;
  readonly reports: readonly ScheduleReconcileReport[];
  readonly reconcilerRuns: number;
  /** Runs cut short: nothing due and the buckets empty (RegistryWorld.invokeReconciler). */
  readonly idleRuns: number;
  /** Definition edits skipped as undetectable by design (RegistryWorld.editUndetectable). */
  readonly editsSkipped: number;
  readonly reconcilerFailures: number;
  readonly editsApplied: Record<string, number>;
  readonly schedulerCalls: number;
  readonly events: number;
  /** Rejected ops' actors' writes (S5). */
  readonly writesByRejected: readonly string[];
  /** True time after which the state first matched S1-S3 and went on matching at every later tick; undefined: never. */
  readonly convergedAt?: number;
  readonly lastChangeAt: number;
  /** The other jobs' groups' schedules at the end (S2: there is no row of theirs, so none may be left). */
  readonly otherSchedules: readonly FakeSchedule[];
  /** S7: orphans still there REPAIR_BOUND_MS after they were made. */
  readonly unrepaired: readonly string[];
}

export function runRegistryWorld(plan: RegistryPlan): Promise<RegistryOutcome> {
  return new RegistryWorld(plan).run();
}

class RegistryWorld implements NetworkHost, Applier {
  private readonly vt = new VirtualTime(REGISTRY_T0);
  private readonly trace: TraceLine[] = [];
  private readonly aws: FakeAws;
  private readonly scheduler: FakeScheduler;
  private readonly table: FakeTable;
  private readonly network: Network;
  private readonly horizon: number;
  private readonly lastChangeAt: number;
  private readonly counts = { app: 0, reconciler: 0 };
  private readonly ops: OpRecord[] = [];
  private readonly writes: RegistryWrite[] = [];
  private readonly reports: ScheduleReconcileReport[] = [];
  private readonly editsApplied: Record<string, number> = {};
  private readonly callerProjections = new Map<number, ScheduleProjection>();
  private reconcilerFailures = 0;
  private idleRuns = 0;
  private editsSkipped = 0;
  private reconcilersRunning = 0;
  private applying: { actor: Actor; op: string } | undefined;
  private convergedAt: number | undefined;
  private templateVersion = 1;
  /** S7's: orphans still there REPAIR_BOUND_MS after they were made. */
  private readonly unrepaired: string[] = [];
  /** The stack's run-time-schedule jobs: the plan's job, then its other ones (no rows; orphans only). */
  private readonly jobs: readonly string[];

  constructor(private readonly plan: RegistryPlan) {
    this.jobs = [REGISTRY_JOB, ...Array.from({ length: plan.otherJobs ?? 0 }, (_, i) => otherJobId(i))];
    this.aws = sharedFakeAws(this.vt);
    this.scheduler = sharedFakeScheduler(this.vt);
    // Small pages, so that the audit's listing and the registry's queries page as they do at scale.
    this.scheduler.pageSize = 2;
    this.table = this.aws.addTable(REGISTRY_TABLE_NAME, {
      partitionKey: REGISTRY_TABLE.partitionKey,
      sortKey: REGISTRY_TABLE.sortKey,
      indexes: [REGISTRY_TABLE.syncIndex, REGISTRY_TABLE.auditIndex],
    });
    this.table.onWrite = (before, after) => this.tableWritten(before, after);
    for (const jobId of this.jobs) {
      this.scheduler.addGroup(this.groupOfJob(jobId));
      this.seedTemplate(jobId);
    }
    this.network = new Network({ callFaults: plan.callFaults }, this.vt, REGISTRY_T0, this, this);
    const clients = sdkClients();
    for (const client of [clients.doc, clients.scheduler]) this.network.intercept(client as unknown as SendingClient);
    this.lastChangeAt = REGISTRY_T0 + lastChangeMs(plan);
    this.horizon = this.lastChangeAt + convergenceBoundMs(plan);
  }

  async run(): Promise<RegistryOutcome> {
    for (const [i, op] of this.plan.ops.entries()) this.vt.scheduleSystem(op.atMs, () => this.invokeOp(op, i + 1));
    for (const edit of this.plan.edits) this.vt.scheduleSystem(edit.atMs, () => this.handEdit(edit));
    this.vt.scheduleSystem(this.plan.phaseMs, () => this.invokeReconciler());
    const uninstall = this.vt.install();
    try {
      await this.vt.runUntil(this.horizon);
    } finally {
      uninstall();
    }
    return this.outcome();
  }

  note(who: string, what: string): void {
    this.trace.push({ t: this.vt.now - REGISTRY_T0, who, what });
  }

  kill(actor: Actor, why: string): void {
    if (actor.dead) return;
    actor.dead = true;
    const op = this.ops.find((o) => o.actor === actor.name);
    if (op !== undefined) {
      op.killed = true;
      op.endedAt = this.vt.now;
      op.outcome = 'killed';
    }
    this.note(actor.name, `DIES: ${why}`);
  }

  freeze(actor: Actor, ms: number): void {
    actor.frozenUntil = Math.max(actor.frozenUntil, this.vt.now + ms);
  }

  faultAllowed(): boolean {
    return true;
  }

  /** The network's Applier: apply, and remember whose request it is while the fakes run it (tableWritten). */
  async apply(
    actor: Actor,
    op: string,
    label: string,
    command: SdkCommand,
    send: () => Promise<unknown>,
  ): Promise<Applied> {
    let result: Applied;
    this.applying = { actor, op };
    try {
      result = { ok: true, value: await send() };
    } catch (error) {
      result = { ok: false, error };
    } finally {
      this.applying = undefined;
    }
    void label;
    this.note(
      'aws',
      `${actor.name} ${op} ${describeTarget(command)} → ${result.ok ? 'ok' : (result.error as Error).name}`,
    );
    return result;
  }

  private tableWritten(before: Row | undefined, after: Row | undefined): void {
    const who = this.applying?.actor.name ?? 'system';
    // As the store reads them (the input is kept as JSON text).
    const read = (item: Row | undefined) => rowOf(structuredClone(item)) as unknown as Row | undefined;
    this.writes.push({ at: this.vt.now, who, op: this.applying?.op ?? '?', before: read(before), after: read(after) });
  }

  // ---- set-up -------------------------------------------------------------------------------------------------------

  private groupOfJob(jobId: string): string {
    return jobId === REGISTRY_JOB ? KEYED_GROUP : groupOf(jobId);
  }

  /** A job's template as the stack deploys it: DISABLED, never firing, its input the job's event + the keyed group. */
  private seedTemplate(jobId: string): void {
    this.scheduler.seed({
      Name: jobId,
      GroupName: SHARED_GROUP,
      ScheduleExpression: 'cron(0 0 1 1 ? 2199)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: TRIGGER_ARN,
        RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
        Input: JSON.stringify(this.templateEvent(jobId)),
        RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
        DeadLetterConfig: { Arn: 'arn:aws:sqs:eu-central-1:123456789012:trigger-dlq' },
      },
    });
  }

  private templateEvent(jobId = REGISTRY_JOB): Record<string, unknown> {
    return {
      jobId,
      scheduledTime: '<aws.scheduler.scheduled-time>',
      worker: 'reports',
      deadlineSeconds: this.templateVersion === 1 ? 21_600 : 7_200,
      retentionDays: 30,
      keyedScheduleGroup: this.groupOfJob(jobId),
    };
  }

  private clock(): Clock {
    return { now: () => this.vt.now + (VirtualTime.actor()?.skewMs ?? 0) };
  }

  private logger(): Logger {
    const log = (message: string, fields: Record<string, unknown> = {}) =>
      this.note(VirtualTime.actor()?.name ?? '?', `log: ${message} ${JSON.stringify(fields).slice(0, 200)}`);
    return { debug: log, info: log, warn: log, error: log };
  }

  private projection(): SchedulerProjection {
    return new SchedulerProjection(sdkClients().scheduler, SHARED_GROUP, this.clock());
  }

  private registry(): DynamoScheduleRegistry {
    return new DynamoScheduleRegistry(sdkClients().doc, REGISTRY_TABLE_NAME);
  }

  // ---- the app ------------------------------------------------------------------------------------------------------

  private invokeOp(op: RegistryOp, index: number): void {
    const actor = new Actor('app', ++this.counts.app, 0);
    const record: OpRecord = { index, op, actor: actor.name, startedAt: this.vt.now };
    this.ops.push(record);
    const key = KEYS[op.key];
    this.note(
      actor.name,
      `invoked: ${op.op} ${key}${op.op === 'upsert' ? ` spec ${op.spec}` : ''} (caller ${op.caller})`,
    );
    // One caller is one long-lived app process: its template cache outlives a call (60 s, rememberingTemplates).
    let projection = this.callerProjections.get(op.caller);
    if (projection === undefined) {
      projection = rememberingTemplates(this.projection(), this.clock());
      this.callerProjections.set(op.caller, projection);
    }
    const deps: ManageScheduleDeps = { registry: this.registry(), projection, clock: this.clock() };
    const by = `caller-${op.caller}`;
    const call = async (): Promise<{ outcome: string; returned?: RegisteredSchedule }> => {
      if (op.op === 'upsert') {
        const result = await upsertScheduleRecord(deps, REGISTRY_JOB, key, SPECS[op.spec] ?? SPECS[0], { by });
        return { outcome: result.outcome, returned: result.schedule };
      }
      if (op.op === 'delete') {
        const result = await deleteScheduleRecord(deps, REGISTRY_JOB, key, { by });
        return { outcome: result.deleted ? 'deleted' : 'absent' };
      }
      const state = op.op === 'pause' ? 'PAUSED' : 'ENABLED';
      const returned = await setScheduleState(deps, REGISTRY_JOB, key, state, { by });
      return { outcome: op.op === 'pause' ? 'paused' : 'resumed', returned };
    };
    this.vt
      .runAs(actor, call)
      .then(
        (result) => {
          if (actor.dead) return;
          Object.assign(record, { ...result, ok: true, endedAt: this.vt.now });
          this.note(actor.name, `returned ${result.outcome}${result.returned ? ` v${result.returned.version}` : ''}`);
        },
        (error: Error) => {
          if (actor.dead) return;
          Object.assign(record, { outcome: error.name, ok: false, endedAt: this.vt.now });
          this.note(actor.name, `threw ${error.name}: ${String(error.message).slice(0, 160)}`);
        },
      )
      .finally(() => {
        actor.dead = true;
      });
  }

  // ---- Scheduler behind the registry's back ------------------------------------------------------------------------

  private handEdit(edit: HandEdit): void {
    const name = scheduleNameOf(KEYS[edit.key]);
    let applied = false;
    if (edit.edit === 'delete') applied = this.scheduler.handDelete(KEYED_GROUP, name);
    if (edit.edit === 'disable') applied = this.scheduler.handDisable(KEYED_GROUP, name);
    if (edit.edit === 'edit') {
      if (this.editUndetectable(edit)) {
        this.editsSkipped++;
        this.note(
          'hand',
          `edit ${name} skipped: within the audit's margin of a write of the schedule (beyond the bound)`,
        );
        return;
      }
      applied = this.scheduler.handEdit(KEYED_GROUP, name, 'rate(5 minutes)');
    }
    if (edit.edit === 'orphan') {
      // A key the app never had, in that key's bucket, or the schedule of a key not in play in this plan; or a name
      // of any shape; in the group of any of the stack's jobs.
      // (Only a key not in play: a key in play may have a row by then, whose schedule this would be, not an orphan.)
      const notInPlay = KEYS.length - this.plan.keys;
      const shaped =
        notInPlay > 0
          ? scheduleNameOf(KEYS[this.plan.keys + (edit.key % notInPlay)] ?? 'ghost')
          : `${name.slice(0, 3)}ghost.0123456789abcdef`;
      const orphan = edit.stray === undefined ? shaped : STRAY_NAMES[edit.stray % STRAY_NAMES.length];
      const group = this.groupOfJob(this.jobs[(edit.job ?? 0) % this.jobs.length]);
      applied = this.scheduler.handCreate(group, orphan, 'rate(1 hour)', this.scheduler.schedulesOf(group)[0]);
      if (applied) this.expectRemoved(group, orphan);
      this.note('hand', `orphan ${orphan} in ${group}${applied ? '' : ' (already there)'}`);
      if (applied) this.editsApplied.orphan = (this.editsApplied.orphan ?? 0) + 1;
      return;
    }
    if (edit.edit === 'redeploy') {
      // A deployment changed the job's settings: its template's input changes, and every schedule must follow it.
      this.templateVersion = 2;
      const template = this.scheduler.schedule(SHARED_GROUP, REGISTRY_JOB);
      if (template !== undefined) {
        template.Target = { ...template.Target, Input: JSON.stringify(this.templateEvent()) };
        template.LastModificationDate = new Date(this.vt.now);
        applied = true;
      }
    }
    if (applied) this.editsApplied[edit.edit] = (this.editsApplied[edit.edit] ?? 0) + 1;
    this.note(
      'hand',
      `${edit.edit} ${edit.edit === 'redeploy' ? 'the template' : name}${applied ? '' : ' (nothing to change)'}`,
    );
  }

  /**
   * S7: an orphan made once the plan's faulted reconciler runs are over is gone REPAIR_BOUND_MS later (the same
   * schedule: one made again later by another edit is that edit's to check).
   */
  private expectRemoved(group: string, name: string): void {
    const faultedRunsEnd = this.plan.phaseMs + FAULTED_RECONCILER_RUNS * PERIOD_MS + RECONCILER_TIMEOUT_SECONDS * 1000;
    const madeAt = this.vt.now;
    if (madeAt - REGISTRY_T0 <= faultedRunsEnd) return;
    this.vt.scheduleSystem(REPAIR_BOUND_MS, () => {
      const still = this.scheduler.schedule(group, name);
      if (still !== undefined && still.CreationDate.getTime() <= madeAt)
        this.unrepaired.push(
          `orphan ${name} in ${group}, made at +${(madeAt - REGISTRY_T0) / 60_000} min, still there ${REPAIR_BOUND_MS / 60_000} min later`,
        );
    });
  }

  /**
   * An edit of a schedule's definition (not its state) that the audit cannot see: ListSchedules shows a schedule's
   * name, state and last change only, so the audit finds such an edit by a LastModificationDate later than the row's
   * syncedAt by more than EDITED_BY_HAND_MARGIN_MS. An edit while a write of the schedule is in flight (its row due,
   * an app call on its key, a reconciler run), or within that margin after its sync, is indistinguishable from the
   * write itself: a bound of the design, so the world skips such edits and counts them.
   */
  private editUndetectable(edit: HandEdit): boolean {
    const key = KEYS[edit.key];
    const row = this.table.row({ jobId: REGISTRY_JOB, scheduleKey: key });
    if (row === undefined) return false;
    const busy = this.ops.some((o) => o.op.key === edit.key && o.endedAt === undefined) || this.reconcilersRunning > 0;
    const syncedAt = typeof row.syncedAt === 'string' ? Date.parse(row.syncedAt) : Number.NEGATIVE_INFINITY;
    return busy || row.syncDueAt !== undefined || this.vt.now - syncedAt <= EDITED_BY_HAND_MARGIN_MS + 1_000;
  }

  // ---- the reconciler -----------------------------------------------------------------------------------------------

  /**
   * One run as deployed (every 5 minutes, killed at its function timeout); the state is checked after each.
   *
   * A run with nothing to do is cut short, because the audit's runs and the sweep's 16 index queries per run are most
   * of a plan's calls: when no row is due for the sweep and the K slices the cursor points at hold no row and no
   * schedule in any job's group, the run's queries and listings would all come back empty and it would only advance
   * the cursor. Such a run advances the cursor as the reconciler does (the real cursor store and auditWindow) and
   * makes no other call. The plan's faulted runs always run in full.
   */
  private invokeReconciler(): void {
    if (this.vt.now + PERIOD_MS <= this.horizon) this.vt.scheduleSystem(PERIOD_MS, () => this.invokeReconciler());
    const actor = new Actor('reconciler', ++this.counts.reconciler, 0);
    this.vt.scheduleSystem(RECONCILER_TIMEOUT_SECONDS * 1000, () => {
      if (!actor.dead) this.kill(actor, 'Lambda timeout');
    });
    if (actor.index > FAULTED_RECONCILER_RUNS && this.reconcilerIdle()) {
      this.idleRuns++;
      const cursor = new DynamoAuditCursorStore(sdkClients().doc, REGISTRY_TABLE_NAME);
      this.vt
        .runAs(actor, async () => {
          const stored = await cursor.read();
          await cursor.write(auditWindow(stored, AUDIT_SLICES_PER_RUN).next, stored?.version);
        })
        .catch((error: Error) => this.note(actor.name, `threw ${error.name}`))
        .finally(() => {
          actor.dead = true;
          this.checkConverged();
        });
      return;
    }
    // As functions/reconciler.ts deploys it: templates read with their last change, so the audit finds schedules
    // projected from a template a deployment has since changed.
    const projection = withDatedTemplates(this.projection(), sdkClients().scheduler, SHARED_GROUP);
    this.reconcilersRunning++;
    this.vt
      .runAs(actor, () =>
        reconcileSchedules({
          registry: this.registry(),
          projection,
          cursor: new DynamoAuditCursorStore(sdkClients().doc, REGISTRY_TABLE_NAME),
          jobs: this.jobs,
          clock: this.clock(),
          logger: this.logger(),
          metrics: noMetricsHere,
        }),
      )
      .then(
        (report) => {
          if (actor.dead) return;
          this.reports.push(report);
          if (report.errors > 0) this.reconcilerFailures++;
          this.note(
            actor.name,
            `returned: ${report.repairs.length} repairs, ${report.errors} errors, audited ${report.audited.length}`,
          );
        },
        (error: Error) => {
          this.reconcilerFailures++;
          this.note(actor.name, `threw ${error.name}: ${error.message.slice(0, 160)}`);
        },
      )
      .finally(() => {
        actor.dead = true;
        this.reconcilersRunning--;
        this.checkConverged();
      });
  }

  /** No row due for the sweep, and the slices the cursor points at empty in the registry and in every job's group. */
  private reconcilerIdle(): boolean {
    const now = new Date(this.vt.now).toISOString();
    const rows = [...this.table.rows.values()];
    if (rows.some((r) => typeof r.syncDueAt === 'string' && r.syncDueAt <= now)) return false;
    const stored = this.table.row({ jobId: '#audit', scheduleKey: '#cursor' });
    const position =
      stored === undefined ? undefined : { slice: Number(stored.nextSlice), cycle: Number(stored.cycle) };
    const { slices } = auditWindow(position, AUDIT_SLICES_PER_RUN);
    return this.jobs.every((jobId) => {
      const schedules = this.scheduler.schedulesOf(this.groupOfJob(jobId));
      return slices.every(
        (slice) =>
          !bucketsOfSlice(slice).some((b) => rows.some((r) => r.auditBucket === auditBucketKey(jobId, b))) &&
          !schedules.some((s) => s.Name.startsWith(slice)),
      );
    });
  }

  private checkConverged(): void {
    const ok = this.vt.now > this.lastChangeAt && convergenceProblems(this.snapshot(), this.vt.now).length === 0;
    if (!ok) this.convergedAt = undefined;
    else this.convergedAt ??= this.vt.now;
  }

  private snapshot() {
    const rows = [...this.table.rows.values()]
      .filter((r) => r.jobId === REGISTRY_JOB)
      .map((r) => rowOf(structuredClone(r)) as RegisteredSchedule);
    const otherSchedules = this.jobs.slice(1).flatMap((jobId) => this.scheduler.schedulesOf(groupOf(jobId)));
    return {
      rows,
      schedules: this.scheduler.schedulesOf(KEYED_GROUP),
      otherSchedules,
      templateEvent: this.templateEvent(),
    };
  }

  private outcome(): RegistryOutcome {
    const rejected = new Set(
      this.ops.filter((o) => o.op.op === 'upsert' && o.op.spec >= FIRST_INVALID_SPEC).map((o) => o.actor),
    );
    const schedulerWriters = this.scheduler.changes.length; // counted below per actor through the trace
    void schedulerWriters;
    const writesByRejected = [
      ...this.writes.filter((w) => rejected.has(w.who)).map((w) => `${w.who} ${w.op}`),
      ...this.trace
        .filter((l) => l.who === 'aws' && /^(app#\d+) (Create|Update|Delete)Schedule/.test(l.what))
        .filter((l) => rejected.has(l.what.split(' ')[0] ?? ''))
        .map((l) => l.what),
    ];
    return {
      plan: this.plan,
      trace: this.trace,
      horizon: this.horizon,
      ops: this.ops,
      writes: this.writes,
      ...this.snapshot(),
      reports: this.reports,
      reconcilerRuns: this.counts.reconciler,
      idleRuns: this.idleRuns,
      editsSkipped: this.editsSkipped,
      reconcilerFailures: this.reconcilerFailures,
      editsApplied: this.editsApplied,
      schedulerCalls: this.scheduler.calls.length,
      events: this.vt.events,
      writesByRejected,
      convergedAt: this.convergedAt,
      lastChangeAt: this.lastChangeAt,
      unrepaired: this.unrepaired,
    };
  }
}

const noMetricsHere: Metrics = { add: () => {} };

function describeTarget(command: SdkCommand): string {
  const input = command.input as {
    Key?: { scheduleKey?: string };
    Item?: { scheduleKey?: string };
    Name?: string;
    NamePrefix?: string;
  };
  return (
    input.Key?.scheduleKey ??
    input.Item?.scheduleKey ??
    input.Name ??
    (input.NamePrefix ? `prefix ${input.NamePrefix}` : '')
  );
}

// ---- invariants ----------------------------------------------------------------------------------------------------

export type RegistryInvariantId = 'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6' | 'S7';

export const REGISTRY_INVARIANTS: Readonly<Record<RegistryInvariantId, string>> = {
  S1: 'convergence: every live registry row (not finished) has exactly one Scheduler schedule matching it (state, expression, time zone, start and end, input, action after completion)',
  S2: "no schedule in any job's group without a live row",
  S3: 'no tombstone left, and no row still due for its projection',
  S4: "a call that returned success is in the row's history (what it asked for, written before it returned, by it when it says it wrote; an upsert that says unchanged wrote nothing); the last change of a key nothing raced is what the row holds (last writer wins); a last delete leaves no row",
  S5: 'every put raises the row version by one; a call refused for bad input wrote nothing',
  S6: 'a pause, resume or delete changes only the state of the row it replaces: never its expression, zone, dates, input or description (no lost update)',
  S7: `the repair bound per stack: an orphan of any name in any job's group, made after the faulted reconciler runs, is gone within ${REPAIR_BOUND_MS / 60_000} min (${repairBoundRuns(AUDIT_SLICES_PER_RUN)} periods and a run's timeout)`,
};

export interface RegistryViolation {
  readonly invariant: RegistryInvariantId;
  readonly message: string;
}

/** S1-S3 on a state: the problems, empty when the registry and Scheduler agree. */
export function convergenceProblems(
  state: {
    rows: readonly RegisteredSchedule[];
    schedules: readonly FakeSchedule[];
    otherSchedules?: readonly FakeSchedule[];
    templateEvent: Record<string, unknown>;
  },
  now: number,
): { invariant: RegistryInvariantId; message: string }[] {
  const problems: { invariant: RegistryInvariantId; message: string }[] = [];
  const byName = new Map(state.schedules.map((s) => [s.Name, s]));
  const live = state.rows.filter((r) => r.deletedAt === undefined);
  for (const row of state.rows) {
    if (row.deletedAt !== undefined)
      problems.push({ invariant: 'S3', message: `${row.scheduleKey}: a tombstone (v${row.version}) is left` });
    else if (row.syncDueAt !== undefined)
      problems.push({
        invariant: 'S3',
        message: `${row.scheduleKey}: v${row.version} still due for its projection (${row.syncDueAt})`,
      });
  }
  for (const row of live) {
    if (isFinished(row, now)) continue;
    const schedule = byName.get(row.scheduleName);
    if (schedule === undefined) {
      problems.push({
        invariant: 'S1',
        message: `${row.scheduleKey} (v${row.version}, ${row.state}): no schedule ${row.scheduleName}`,
      });
      continue;
    }
    for (const difference of differences(row, schedule, state.templateEvent, now))
      problems.push({ invariant: 'S1', message: `${row.scheduleKey} (v${row.version}): ${difference}` });
  }
  const names = new Set(live.map((r) => r.scheduleName));
  for (const s of state.schedules)
    if (!names.has(s.Name))
      problems.push({ invariant: 'S2', message: `schedule ${s.Name} (${s.State}) has no live row` });
  for (const s of state.otherSchedules ?? [])
    problems.push({ invariant: 'S2', message: `schedule ${s.Name} in ${s.GroupName} (${s.State}) has no live row` });
  return problems;
}

/** How a schedule differs from what its row says it must be. */
function differences(
  row: RegisteredSchedule,
  s: FakeSchedule,
  templateEvent: Record<string, unknown>,
  now: number,
): string[] {
  const found: string[] = [];
  const expect = (what: string, actual: unknown, wanted: unknown) => {
    if (!sameJson(actual, wanted))
      found.push(`${what} is ${JSON.stringify(actual)}, the row says ${JSON.stringify(wanted)}`);
  };
  expect('state', s.State, row.state === 'PAUSED' ? 'DISABLED' : 'ENABLED');
  expect('expression', s.ScheduleExpression, row.expression);
  expect('time zone', s.ScheduleExpressionTimezone ?? 'UTC', row.timeZone ?? DEFAULT_SCHEDULE_TIME_ZONE);
  expect('end date', s.EndDate?.toISOString(), row.endDate === undefined ? undefined : iso(Date.parse(row.endDate)));
  // A start still ahead is the row's; one already past is the projection's to choose (Scheduler refuses a start more
  // than 5 minutes past): it may only be at or after the row's.
  if (row.startDate !== undefined && Date.parse(row.startDate) > now)
    expect('start date', s.StartDate?.toISOString(), iso(Date.parse(row.startDate)));
  else if (
    s.StartDate !== undefined &&
    (row.startDate === undefined || s.StartDate.getTime() < Date.parse(row.startDate))
  )
    found.push(`start date ${s.StartDate.toISOString()} is before the row's ${String(row.startDate)}`);
  expect(
    'action after completion',
    s.ActionAfterCompletion ?? 'NONE',
    row.expression.startsWith('at(') ? 'DELETE' : 'NONE',
  );
  let input: unknown;
  try {
    input = JSON.parse(String(s.Target.Input));
  } catch {
    input = s.Target.Input;
  }
  const { keyedScheduleGroup: _, ...event } = templateEvent;
  expect('input', input, {
    ...event,
    scheduleKey: row.scheduleKey,
    ...(row.input === undefined ? {} : { input: row.input }),
  });
  expect('target', s.Target.Arn, TRIGGER_ARN);
  return found;
}

const SPEC_FIELDS = ['expression', 'timeZone', 'startDate', 'endDate', 'input', 'description'] as const;

/** What a successful op asked the row to hold (compared with specOf the row), normalised as the registry stores it. */
function asked(op: RegistryOp): Record<string, unknown> | undefined {
  if (op.op !== 'upsert') return undefined;
  const spec = SPECS[op.spec] ?? SPECS[0];
  return {
    expression: spec.expression,
    timeZone: spec.timeZone ?? DEFAULT_SCHEDULE_TIME_ZONE,
    startDate: spec.startDate === undefined ? undefined : iso(Date.parse(spec.startDate)),
    endDate: spec.endDate === undefined ? undefined : iso(Date.parse(spec.endDate)),
    input: spec.input,
    state: spec.enabled === false ? 'PAUSED' : 'ENABLED',
    description: spec.description,
  };
}

function holds(row: Row | RegisteredSchedule | undefined, want: Record<string, unknown>): string[] {
  if (row === undefined) return ['no row'];
  const r = row as Record<string, unknown>;
  return Object.entries(want)
    .filter(([k, v]) => !sameJson(r[k] ?? undefined, v))
    .map(([k, v]) => `${k} is ${JSON.stringify(r[k])}, asked ${JSON.stringify(v)}`);
}

/** What one app call wrote: its registry writes and its Scheduler writes (from the trace). */
function writesOf(o: RegistryOutcome, actor: string): string[] {
  return [
    ...o.writes.filter((w) => w.who === actor).map((w) => `${w.op} of the row`),
    ...o.trace
      .filter((l) => l.who === 'aws' && l.what.startsWith(`${actor} `))
      .filter((l) => /^\S+ (Create|Update|Delete)Schedule/.test(l.what) && l.what.endsWith('→ ok'))
      .map((l) => l.what),
  ];
}

export function checkRegistryInvariants(o: RegistryOutcome): RegistryViolation[] {
  const violations: RegistryViolation[] = [...convergenceProblems(o, o.horizon)];
  const fail = (invariant: RegistryInvariantId, message: string) => violations.push({ invariant, message });
  const finalRow = (key: string) => o.rows.find((r) => r.scheduleKey === key);
  // S4: each success is in the row's history: what it asked for was written (by it, when it says it wrote) before it
  // returned. What it returned may be a racing writer's newer row (the row as it now is), even a row created again
  // after a delete, whose versions start over at 1: so no version is compared here.
  for (const rec of o.ops) {
    if (!rec.ok) continue;
    const key = KEYS[rec.op.key];
    if (rec.outcome === 'unchanged')
      for (const w of writesOf(o, rec.actor)) fail('S4', `${rec.actor} returned unchanged, yet wrote: ${w}`);
    const want = asked(rec.op);
    if (want !== undefined && rec.returned !== undefined) {
      const own = rec.outcome === 'created' || rec.outcome === 'updated';
      const written = o.writes.find(
        (w) =>
          w.after?.scheduleKey === key &&
          w.after.deletedAt === undefined &&
          w.at <= (rec.endedAt ?? Number.POSITIVE_INFINITY) &&
          (!own || w.who === rec.actor) &&
          holds(w.after, want).length === 0,
      );
      if (written === undefined)
        fail(
          'S4',
          `${rec.actor} upsert ${key} returned ${rec.outcome} v${rec.returned.version}, but no such write of what it asked is in the row's history`,
        );
    }
    if ((rec.op.op === 'pause' || rec.op.op === 'resume') && rec.returned !== undefined) {
      const state = rec.op.op === 'pause' ? 'PAUSED' : 'ENABLED';
      const written = o.writes.some(
        (w) =>
          w.after?.scheduleKey === key && w.after.state === state && w.at <= (rec.endedAt ?? Number.POSITIVE_INFINITY),
      );
      if (!written)
        fail('S4', `${rec.actor} ${rec.op.op} ${key} returned v${rec.returned.version}, but no write made it ${state}`);
    }
  }
  // S4: the last change of a key, when nothing raced it, is what the row holds at the end.
  for (const [k, key] of KEYS.entries()) {
    const onKey = o.ops.filter((r) => r.op.key === k && !(r.op.op === 'upsert' && r.op.spec >= FIRST_INVALID_SPEC));
    const last = onKey.at(-1);
    if (last === undefined || !last.ok) continue;
    const raced = onKey.some(
      (r) => r !== last && (r.endedAt === undefined || r.endedAt + OP_SETTLE_MS > last.startedAt),
    );
    if (raced) continue;
    const row = finalRow(key);
    if (last.op.op === 'delete' && row !== undefined)
      fail('S4', `${key}: deleted last (${last.actor}), yet a row v${row.version} is left`);
    const want = asked(last.op);
    if (want !== undefined)
      for (const p of holds(row, want)) fail('S4', `${key}: upserted last (${last.actor}), but ${p}`);
    if (
      (last.op.op === 'pause' || last.op.op === 'resume') &&
      row?.state !== (last.op.op === 'pause' ? 'PAUSED' : 'ENABLED')
    )
      fail('S4', `${key}: ${last.op.op}d last (${last.actor}), but the row is ${String(row?.state)}`);
  }
  // S5: versions rise by one per put; refused calls wrote nothing.
  for (const w of o.writes) {
    if (w.after === undefined || w.after.jobId !== REGISTRY_JOB || w.op !== 'PutItem') continue;
    const wanted = Number(w.before?.version ?? 0) + 1;
    if (Number(w.after.version) !== wanted)
      fail(
        'S5',
        `${w.who}'s put of ${String(w.after.scheduleKey)} made v${String(w.after.version)} over v${String(w.before?.version)}`,
      );
  }
  for (const w of o.writesByRejected) fail('S5', `a refused call wrote: ${w}`);
  for (const orphan of o.unrepaired) fail('S7', orphan);
  // S6: a state change or a delete is computed from the row it read; applied over another row (a newer one, or one
  // created again after a delete, whose version restarted), it would bring back the old row's spec.
  const opOf = new Map(o.ops.map((r) => [r.actor, r.op.op]));
  for (const w of o.writes) {
    const kind = opOf.get(w.who);
    if (w.op !== 'PutItem' || w.before === undefined || w.after === undefined) continue;
    if (kind !== 'pause' && kind !== 'resume' && kind !== 'delete') continue;
    const changed = SPEC_FIELDS.filter((f) => !sameJson(w.before?.[f], w.after?.[f]));
    if (changed.length > 0)
      fail(
        'S6',
        `${w.who}'s ${kind} of ${String(w.after.scheduleKey)} (v${String(w.before.version)} → v${String(w.after.version)}) changed ${changed
          .map((f) => `${f} ${JSON.stringify(w.before?.[f])} → ${JSON.stringify(w.after?.[f])}`)
          .join(', ')}`,
      );
  }
  for (const rec of o.ops)
    if (rec.op.op === 'upsert' && rec.op.spec >= FIRST_INVALID_SPEC && rec.ok)
      fail('S5', `${rec.actor} upserted invalid spec ${rec.op.spec} and it returned ${rec.outcome}`);
  return violations;
}

// ---- many runs -----------------------------------------------------------------------------------------------------

export interface RegistryTally {
  runs: number;
  events: number;
  ops: Record<string, number>;
  /** App calls that died (a crash fault) and calls that returned an error after a fault. */
  killed: number;
  editsApplied: Record<string, number>;
  editsSkipped: number;
  repairs: Record<string, number>;
  reconcilerRuns: number;
  idleRuns: number;
  reconcilerErrors: number;
  schedulerCalls: number;
  registryWrites: number;
  faults: Record<string, number>;
  /** Minutes from the last change to convergence (S1-S3 holding from then on), per run. */
  convergeMinutes: number[];
  /** Runs whose stack had other run-time-schedule jobs, and orphans planned with a hand-made name. */
  severalJobs: number;
  strayOrphans: number;
}

export interface RegistryReport {
  readonly seed: number;
  readonly requestedRuns: number;
  readonly tally: RegistryTally;
  readonly elapsedMs: number;
  readonly failure?: {
    readonly plan: RegistryPlan;
    readonly violations: RegistryViolation[];
    readonly trace: TraceLine[];
    readonly shrinks: number;
  };
}

export async function simulateRegistryPlan(plan: RegistryPlan) {
  const outcome = await runRegistryWorld(plan);
  return { outcome, violations: checkRegistryInvariants(outcome) };
}

/** Many generated plans, with fast-check (reproducible from the seed; a failing plan is shrunk). */
export async function simulateRegistry(options: {
  runs: number;
  seed: number;
  /** Stop after this long (wall clock) with the runs done so far, as fast-check's interruptAfterTimeLimit. */
  timeLimitMs?: number;
  plans?: fc.Arbitrary<RegistryPlan>;
  onRun?: (done: number) => void;
}): Promise<RegistryReport> {
  const tally: RegistryTally = {
    runs: 0,
    events: 0,
    ops: {},
    killed: 0,
    editsApplied: {},
    editsSkipped: 0,
    repairs: {},
    reconcilerRuns: 0,
    idleRuns: 0,
    reconcilerErrors: 0,
    schedulerCalls: 0,
    registryWrites: 0,
    faults: {},
    convergeMinutes: [],
    severalJobs: 0,
    strayOrphans: 0,
  };
  const { elapsedMs, failure } = await checkPlans({
    plans: options.plans ?? registryPlan,
    simulate: simulateRegistryPlan,
    count: (_plan, { outcome }) => {
      countRun(tally, outcome);
      options.onRun?.(tally.runs);
    },
    runs: options.runs,
    seed: options.seed,
    ...(options.timeLimitMs === undefined ? {} : { timeLimitMs: options.timeLimitMs }),
    world: 'registry',
  });
  const report = { seed: options.seed, requestedRuns: options.runs, tally, elapsedMs };
  if (failure === undefined) return report;
  const { plan, replay, shrinks } = failure;
  return { ...report, failure: { plan, violations: replay.violations, trace: replay.outcome.trace, shrinks } };
}

function countRun(t: RegistryTally, o: RegistryOutcome): void {
  const bump = (r: Record<string, number>, k: string, by = 1) => {
    r[k] = (r[k] ?? 0) + by;
  };
  t.runs++;
  t.events += o.events;
  for (const rec of o.ops) {
    bump(t.ops, `${rec.op.op} ${rec.outcome ?? 'unfinished'}`);
    if (rec.killed) t.killed++;
  }
  for (const [k, n] of Object.entries(o.editsApplied)) bump(t.editsApplied, k, n);
  t.editsSkipped += o.editsSkipped;
  for (const r of o.reports) for (const repair of r.repairs) bump(t.repairs, repair.kind);
  t.reconcilerRuns += o.reconcilerRuns;
  t.idleRuns += o.idleRuns;
  t.reconcilerErrors += o.reconcilerFailures;
  t.schedulerCalls += o.schedulerCalls;
  t.registryWrites += o.writes.length;
  for (const f of o.plan.callFaults) bump(t.faults, `${f.actor} ${f.fault.kind}`);
  if (o.convergedAt !== undefined) t.convergeMinutes.push((o.convergedAt - o.lastChangeAt) / 60_000);
  if ((o.plan.otherJobs ?? 0) > 0) t.severalJobs++;
  t.strayOrphans += o.plan.edits.filter((e) => e.edit === 'orphan' && e.stray !== undefined).length;
}

const registryPlanWithoutOrphans: RegistryPlan = { seed: 0, keys: 1, ops: [], edits: [], callFaults: [], phaseMs: 0 };

const percentile = (sorted: readonly number[], p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN);

/** The summary `npm run sim:registry` prints. */
export function formatRegistryReport(r: RegistryReport): string {
  const t = r.tally;
  const lines = [
    `registry world: seed ${r.seed}; ${t.runs} of ${r.requestedRuns} runs in ${(r.elapsedMs / 1000).toFixed(1)} s (${t.events} events)`,
  ];
  if (r.failure) {
    lines.push(
      `REGISTRY INVARIANT VIOLATED (shrunk ${r.failure.shrinks} times):`,
      ...r.failure.violations.map((v) => `  ${v.invariant} (${REGISTRY_INVARIANTS[v.invariant]}): ${v.message}`),
      `plan: ${JSON.stringify(r.failure.plan)}`,
      'trace:',
      r.failure.trace
        .map((l) => `${`+${(l.t / 1000).toFixed(3)} s`.padStart(14)}  ${l.who.padEnd(13)} ${l.what}`)
        .join('\n'),
    );
    return lines.join('\n');
  }
  const list = (rec: Record<string, number>) =>
    Object.entries(rec)
      .sort()
      .map(([k, v]) => `${v} ${k}`)
      .join(', ') || 'none';
  const minutes = [...t.convergeMinutes].sort((a, b) => a - b);
  lines.push(
    'all registry invariants held in every run:',
    ...Object.entries(REGISTRY_INVARIANTS).map(([id, text]) => `  ${id}. ${text}`),
    `app calls: ${list(t.ops)}; ${t.killed} died mid-call`,
    `faults planned: ${list(t.faults)}`,
    `hand edits applied: ${list(t.editsApplied)}; ${t.editsSkipped} edits of a definition skipped, made while a write of that schedule was in flight or within ${EDITED_BY_HAND_MARGIN_MS / 1000} s after its sync (the audit sees a definition change only by its date: a bound of the design)`,
    `reconciler: every ${PERIOD_MS / 60_000} minutes, K = ${AUDIT_SLICES_PER_RUN} of ${AUDIT_SLICES.length} slices of every job's group per run (a cycle: ${RUNS_PER_CYCLE} runs, ${(RUNS_PER_CYCLE * PERIOD_MS) / 60_000} min, for 1 to ${MAX_OTHER_JOBS + 1} jobs); ` +
      `${t.reconcilerRuns} runs, ${t.reconcilerRuns - t.idleRuns} in full, ${t.idleRuns} with nothing due and empty slices (cursor advanced only); ${t.reconcilerErrors} runs counted errors`,
    `repairs: ${list(t.repairs)}`,
    `stack: ${t.severalJobs} runs with 2 to ${MAX_OTHER_JOBS + 1} run-time-schedule jobs; ${t.strayOrphans} orphans planned with a name of any shape (${STRAY_NAMES.join(', ')})`,
    `converged (S1-S3 held from then on) after the last change: median ${percentile(minutes, 0.5).toFixed(0)} min, p95 ${percentile(minutes, 0.95).toFixed(0)} min, max ${percentile(minutes, 1).toFixed(0)} min ` +
      `(checked at the horizon, ${convergenceBoundMs(registryPlanWithoutOrphans) / 60_000} min after it: a cycle and two periods; ${convergenceBoundMs() / 60_000} min, two cycles, with an orphan)`,
    `calls: ${t.schedulerCalls} to Scheduler, ${t.registryWrites} registry writes`,
  );
  return lines.join('\n');
}
