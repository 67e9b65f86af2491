/** What one simulated run leaves behind: the trace, the final state, and what was observed while it ran. */
import type { JobSettings } from '../functions/protocol/job-settings';
import type { WorkerLimits } from '../functions/protocol/worker-limits';
import type { Row } from './fakes/dynamo-expressions';
import type { ScheduleChange } from './fakes/fake-schedule-switch';
import type { FaultPlan } from './plan';

export interface TraceLine {
  /** ms after the scheduled time. */
  readonly t: number;
  readonly who: string;
  readonly what: string;
}

/** One side effect of the job on its upstream, by the worker holding `leaseId`. */
export interface SideEffect {
  readonly leaseId: string;
  readonly at: number;
  /** The occurrence it ran for (the policy world has several): its id, world.ts occurrenceIdOf. */
  readonly scheduledTime?: string;
}

/** A worker's belief that it holds the occurrence: from its claim to the moment it learns otherwise or stops. */
export interface Belief {
  readonly leaseId: string;
  readonly actor: string;
  readonly from: number;
  to: number | undefined;
  end?: string;
}

export interface StaleWrite {
  readonly t: number;
  readonly who: string;
  readonly what: string;
  readonly rowBefore: string;
}

/** One AWS call as the network saw it: who made it, which operation, when (true time). */
export interface CallRecord {
  readonly who: string;
  readonly op: string;
  readonly t: number;
}

/** One applied write of the job-state row (true time), by the process that sent it. */
export interface JobStateWriteRecord {
  readonly at: number;
  readonly who: string;
  readonly before: Row | undefined;
  readonly after: Row;
}

/** One operator action of the policy world (sim/world.ts), as the operator saw it. */
export interface OperatorRecord {
  readonly action: 'pause' | 'resume' | 'cancel';
  /** cancel: the occurrence it cancels (world.ts occurrenceIdOf). */
  readonly target?: string;
  /** True time it began and returned or threw. */
  readonly at: number;
  endedAt?: number;
  /**
   * pauseJob's, resumeJob's or cancelOccurrence's outcome ('paused', 'already-paused', 'resumed', 'not-paused',
   * 'cancelled', 'refused'), or undefined if it threw.
   */
  outcome?: string;
  /** The job-state row the action wrote, or found, as the action returned it. */
  state?: Row;
  error?: string;
  readonly note?: string;
}

/** One attempt that started its job: the worker's "claimed occurrence" line, past the overlap policy. */
export interface RunStart {
  readonly leaseId: string;
  readonly scheduledTime: string;
  readonly at: number;
}

export interface WorldOutcome {
  readonly plan: FaultPlan;
  readonly variant: string;
  readonly settings: JobSettings;
  readonly limits: WorkerLimits;
  readonly trace: TraceLine[];
  readonly row: Row | undefined;
  /** Every occurrence's row, the first one's first (one unless the world ran a policy scenario). */
  readonly rows: readonly (Row | undefined)[];
  /** The job-state row: the running slot, the buffer. */
  readonly jobState: Row | undefined;
  /** When each occurrence was first recorded BUFFERED (true time), by scheduled time. */
  readonly firstBufferedAt: ReadonlyMap<string, number>;
  /** When a worker first started an attempt of each occurrence (past its overlap policy), by scheduled time. */
  readonly firstStartedAt: ReadonlyMap<string, number>;
  /** The scheduled time of every announcement the subscribers received. */
  /** The occurrences announced (world.ts occurrenceIdOf: the scheduled time, or `key|time` for a keyed one). */
  readonly announcedTimes: readonly string[];
  readonly objects: ReadonlyMap<string, { body: string; metadata?: Record<string, string> }>;
  readonly overwrites: TraceLine[];
  /** When the report object was first written (true time). */
  readonly firstCommitAt: number | undefined;
  readonly staleWrites: StaleWrite[];
  /** Writes that left the row's status index key out of step with its status. */
  readonly indexKeyMismatches: readonly string[];
  /** Fenced writes accepted after the writer's lease had expired while nobody else had claimed (by design). */
  readonly lateUncontestedWrites: number;
  readonly sideEffects: SideEffect[];
  readonly beliefs: Belief[];
  readonly published: number;
  readonly delivered: number;
  /** The last expiry the table recorded for each lease (claim or extend). */
  readonly leaseExpiries: ReadonlyMap<string, number>;
  /** When the row became SUCCEEDED or FAILED, true time. */
  readonly finishedAt: number | undefined;
  readonly deadlineAt: number;
  readonly horizon: number;
  readonly messagesInDlq: number;
  readonly triggerEventsDropped: number;
  /**
   * The reconciler's 5-minute ticks within the horizon, the runs among them that had something to fix (the others
   * are left out: they would read and write nothing), and the occurrences those re-enqueued.
   */
  readonly reconcilerTicks: number;
  readonly reconcilerRuns: number;
  readonly reconcilerRequeues: number;
  readonly workerCrashes: number;
  readonly skipped: { crashes: number; triggerFaults: number; notifierFaults: number };
  /** Largest freeze of a worker, and the spread of worker clock offsets, in ms: the overlap check's preconditions. */
  readonly maxFreezeMs: number;
  readonly skewSpreadMs: number;
  readonly calls: CallRecord[];
  readonly claims: number;
  /** When each lease's claim was applied at the table (true time). */
  readonly claimsApplied: ReadonlyMap<string, number>;
  readonly events: number;
  /** The job-state row's writes, the schedule's state changes and the fire times it held back (policy world). */
  readonly jobStateWrites: readonly JobStateWriteRecord[];
  readonly scheduleChanges: readonly ScheduleChange[];
  readonly firesHeldBack: readonly { readonly scheduledTime: string; readonly at: number }[];
  readonly operatorActions: readonly OperatorRecord[];
  readonly runStarts: readonly RunStart[];
  /** Each lease's claim as the table applied it (true time), and the occurrence it claimed. */
  readonly leaseClaims: ReadonlyMap<string, { readonly scheduledTime: string; readonly at: number }>;
  /** When each occurrence's row first became terminal (true time). */
  readonly terminalAt: ReadonlyMap<string, number>;
  /** When an operator's cancel made each occurrence CANCELLED (true time), by occurrence id. */
  readonly operatorCancelledAt: ReadonlyMap<string, number>;
  /** Every status each occurrence's row had over its life, by occurrence id. */
  readonly statusesSeen: ReadonlyMap<string, ReadonlySet<string>>;
  /** When a report object was written at each key (PutObject or CompleteMultipartUpload applied; true time). */
  readonly commitsAt: ReadonlyMap<string, readonly number[]>;
  /** When each process that died was killed (true time), by actor name. */
  readonly killedAt: ReadonlyMap<string, number>;
}
