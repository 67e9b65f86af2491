/**
 * `occurrences show`: one occurrence in full, from a consistent read of its row: status, attempts, deadline, the
 * lease and its age, the retry state, the report's location, the notification, manual retries, and the attempt
 * history when the row records one.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OperatorOccurrenceStore } from '../../../functions/aws/occurrence-store';
import type { JobState } from '../../../functions/protocol/job-state';
import type { ManualRetryFields } from '../../../functions/protocol/manual-retry';
import {
  type Occurrence,
  type OccurrenceKey,
  OccurrenceStatus,
  OPERATOR_CANCEL_LEASE_PREFIX,
  REPORT_KEY_PREFIX,
} from '../../../functions/protocol/occurrence';
import type { JobStateStore } from '../../../functions/protocol/ports';
import { seriesOf } from '../../../functions/protocol/schedule-key';
import { jobIdArgument, parseArguments, scheduledTimeArgument, scheduleKeyArgument } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT } from '../errors';
import { duration, fieldTable, lateBy, plainTable, when } from '../format';
import { findJob } from '../known-job';
import { continuedLeaseText, isContinued, runFields } from '../run-progress';

export function registerShow(program: Command, setup: CommandSetup): void {
  program
    .command('show')
    .description('one occurrence in full: lease age, attempts, errors, report location')
    .argument('<jobId>', 'the job')
    .argument('<scheduledTime>', 'its scheduled time, ISO-8601 with a zone')
    .option('--json', 'the raw row as JSON')
    .option('--key <scheduleKey>', 'one schedule of a job that takes schedules at run time: its occurrence')
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          scheduledTime: scheduledTimeArgument,
          key: scheduleKeyArgument.optional(),
          json: z.boolean().default(false),
        }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await setup.connect(cmd, { bucket: true, knownJobs: true });
      const row = await runShow(
        setup.deps,
        target.store,
        {
          jobId: seriesOf({ jobId: o.jobId, ...(o.key === undefined ? {} : { scheduleKey: o.key }) }),
          scheduledTime: o.scheduledTime,
        },
        { json: o.json, bucketName: target.bucketName, states: target.states },
      );
      if (row === undefined) {
        setup.deps.io.err(`no occurrence ${o.jobId} ${o.scheduledTime} in ${target.where}`);
        // A misspelt job id looks the same: say so when the job is nowhere either.
        const job = await findJob(target, o.jobId);
        if (job.kind === 'unknown') setup.deps.io.err(`<jobId>: ${job.why}`);
        setup.setExitCode(EXIT.notFound);
      }
    });
}

/**
 * One recorded attempt. The worker may record a bounded list of them (`attempts` or `history`); older rows have
 * none.
 */
export interface RecordedAttempt {
  readonly attempt?: number;
  readonly outcome?: string;
  readonly at?: string;
  readonly leaseId?: string;
  readonly error?: string;
  /** An operator's entry: who. */
  readonly by?: string;
  /** An operator's entry: why. */
  readonly note?: string;
}

type ShownRow = Occurrence & ManualRetryFields & { attempts?: unknown; history?: unknown };

export async function runShow(
  ctx: CommandContext,
  store: OperatorOccurrenceStore,
  key: OccurrenceKey,
  options: { json: boolean; bucketName?: string; states?: JobStateStore },
): Promise<Occurrence | undefined> {
  const row = (await store.get(key)) as ShownRow | undefined;
  if (row === undefined) return undefined;
  if (options.json) {
    ctx.io.out(JSON.stringify(row, null, 2));
    return row;
  }
  // What a BUFFERED row waits for is in its job's job-state row: one more read, for that status only.
  const state = row.status === OccurrenceStatus.BUFFERED ? await options.states?.read(row.jobId) : undefined;
  ctx.io.out(describeOccurrence(ctx, row, options.bucketName, state));
  return row;
}

export function describeOccurrence(
  ctx: CommandContext,
  row: ShownRow,
  bucketName: string | undefined,
  state?: JobState,
): string {
  const now = ctx.clock.now();
  return `${fieldTable(occurrenceFields(row, bucketName, now, state))}\n${historyText(row)}`;
}

function occurrenceFields(
  row: ShownRow,
  bucketName: string | undefined,
  now: number,
  state: JobState | undefined,
): Array<readonly [string, string | undefined]> {
  const pastDeadline = Date.parse(row.deadlineAt) <= now ? ': no attempt starts after it' : '';
  return [
    ['job', row.jobId],
    ['scheduled time', row.scheduledTime],
    ['status', row.status],
    ['attempt', attemptText(row)],
    // A long job's run: progress, checkpoint age, segments (absent on other rows).
    ...runFields(row, now),
    ['created', when(row.createdAt, now)],
    ['deadline', `${when(row.deadlineAt, now)}${pastDeadline}`],
    ['lease', row.status === 'RUNNING' ? leaseSummary(row, now) : undefined],
    ['lease id', row.leaseId],
    ['lease owner', row.leaseOwner],
    ['claimed', when(row.claimedAt, now)],
    ['last heartbeat', when(row.heartbeatAt, now)],
    ['lease expires', when(row.leaseExpiresAt, now)],
    ['released', when(row.releasedAt, now)],
    ['next attempt', when(row.nextAttemptAt, now)],
    ['commit point', commitPointText(row, now)],
    ['last error', row.lastError],
    ['succeeded', when(row.succeededAt, now)],
    ['failed', when(row.failedAt, now)],
    ['worker', row.worker],
    // Why it did not run, or waits: SKIPPED, BUFFERED and CANCELLED rows (docs/schedule-policies.md).
    ...notRunFields(row, now, state),
    ['requested by', row.requestedBy && `${row.requestedBy} (occurrences ${row.origin ?? 'run'})`],
    ['overlap policy', row.overlap && `${row.overlap} (this occurrence's own, instead of the job's)`],
    ['report', reportLocation(row, bucketName)],
    ['notified', notificationText(row, now)],
    ['manual retries', row.manualRetries ? `${row.manualRetries}, last ${when(row.manualRetryAt, now)}` : undefined],
    ['deleted by TTL', when(new Date(row.ttl * 1000).toISOString(), now)],
  ];
}

/**
 * The attempt count, and the attempts made before the manual retries reset it. Not "of N": the job's attempt limit is
 * a setting only its worker knows.
 */
function attemptText(row: ShownRow): string {
  const retries = row.manualRetries === 1 ? 'retry' : 'retries';
  const before = row.previousAttempts
    ? ` (plus ${row.previousAttempts} before ${row.manualRetries} manual ${retries})`
    : '';
  return `${row.attempt}${before}`;
}

/**
 * The committed report's location, or the prefix the job's reports are committed under (the file extension is the
 * job's own, known only to its worker).
 */
function reportLocation(row: ShownRow, bucketName: string | undefined): string {
  const s3 = (key: string) => (bucketName ? `s3://${bucketName}/${key}` : key);
  if (row.reportKey !== undefined) return s3(row.reportKey);
  const none = noReportReason(row);
  return none ?? `none committed yet; it will be under ${s3(`${REPORT_KEY_PREFIX}${row.jobId}/`)}`;
}

/** Why a finished row has no report (none will come), or undefined while one may still be committed. */
function noReportReason(row: ShownRow): string | undefined {
  switch (row.status) {
    case 'SKIPPED':
      return 'none: the occurrence was skipped, so the job did not run';
    case 'CANCELLED':
      return row.cancelledByOperator === undefined
        ? 'none: the run was cancelled before it committed one'
        : 'none: an operator cancelled it before any attempt reached its commit point, so none will be committed';
    case 'FAILED':
      return 'none: the occurrence failed before a report was committed; retry reopens it';
    case 'SUCCEEDED':
      return 'none recorded in the row';
    default:
      return undefined;
  }
}

/**
 * The fields of a row that did not run, or waits to: when and why it was SKIPPED (and what it yielded to), since when
 * and for what it is BUFFERED, when and by which occurrence it was CANCELLED.
 */
function notRunFields(
  row: ShownRow,
  now: number,
  state: JobState | undefined,
): Array<readonly [string, string | undefined]> {
  switch (row.status) {
    case 'SKIPPED':
      return [
        ['skipped', when(row.skippedAt, now)],
        ['why skipped', skipWords(row)],
        [
          'yielded to',
          row.yieldedTo && `the occurrence of ${row.yieldedTo} (occurrences show ${row.jobId} ${row.yieldedTo})`,
        ],
      ];
    case 'BUFFERED':
      return [
        ['buffered', when(row.bufferedAt, now)],
        ['waiting for', waitWords(row, state)],
      ];
    case 'CANCELLED':
      return [
        ['cancelled', when(row.cancelledAt, now)],
        ['cancelled by', cancelWords(row, now)],
        ['why cancelled', row.cancelNote],
      ];
    default:
      return [];
  }
}

function skipWords(row: ShownRow): string {
  switch (row.skipReason) {
    case 'overlap':
      return "overlap: another occurrence of the job held (or was waiting for) the job's running slot, and the overlap policy skips a start then";
    case 'missed': {
      const late = lateBy(row);
      const by = late === undefined ? '' : ` ${duration(late)} after its scheduled time`;
      return `missed: first recorded${by}, past the job's catch-up window; never enqueued`;
    }
    case 'paused':
      return 'paused: delivered while the job was paused (occurrences describe shows the pause)';
    default:
      return 'the row does not say (no skipReason)';
  }
}

function waitWords(row: ShownRow, state: JobState | undefined): string {
  const slot = state?.slotTime
    ? `the job's running slot, held by the occurrence of ${state.slotTime}`
    : "the job's running slot";
  if (state === undefined) return `${slot}; it starts when the slot is released and it heads the buffer`;
  const place = state.buffer?.indexOf(row.scheduledTime) ?? -1;
  const free = state.slotTime ? '' : ' (free now: the release that frees it wakes the head of the buffer)';
  if (place < 0) return `${slot}${free}; not in the job's buffer, so the reconciler re-enqueues it`;
  return `${slot}${free}; ${place + 1} of ${state.buffer?.length} in the buffer, which starts in scheduled-time order`;
}

function cancelWords(row: ShownRow, now: number): string {
  const lease = row.leaseExpiresAt ? `; its worker may have worked on until ${when(row.leaseExpiresAt, now)}` : '';
  if (row.cancelledByOperator !== undefined) {
    const revoked = row.leaseId?.startsWith(OPERATOR_CANCEL_LEASE_PREFIX) === true;
    return `${row.cancelledByOperator} (occurrences cancel)${revoked ? `: this run's lease was revoked${lease}` : ''}`;
  }
  const by = row.cancelledBy ? `the occurrence of ${row.cancelledBy}` : 'a later occurrence (not recorded which)';
  return `${by}, under overlap cancelOther: this run's lease was revoked${lease}`;
}

/** A commit point on a row that is not SUCCEEDED: why a cancel is refused ("too late"). */
function commitPointText(row: ShownRow, now: number): string | undefined {
  if (row.committingLease === undefined || row.status === 'SUCCEEDED') return undefined;
  const current = row.committingLease === row.leaseId ? 'this lease' : `lease ${row.committingLease}`;
  return `${current} reached it ${when(row.committingAt, now)}: its report may be committed, so it cannot be cancelled`;
}

function notificationText(row: ShownRow, now: number): string | undefined {
  if (row.notifiedAt) return `${when(row.notifiedAt, now)}, message ${row.notificationId ?? '?'}`;
  return row.status === 'SUCCEEDED' ? 'not yet' : undefined;
}

function historyText(row: ShownRow): string {
  const history = attemptHistory(row);
  if (history === undefined) {
    return 'attempt history: not recorded in this row (the counts and times above are what it has)';
  }
  if (history.length === 0) return 'attempt history: empty';
  // Operators' entries (a cancel, a reopening) say who, and why: a column only when some entry has one.
  const byColumn = history.some((a) => a.by !== undefined);
  const table = plainTable(
    ['attempt', 'outcome', 'at', 'lease id', 'error', ...(byColumn ? ['by (why)'] : [])],
    history.map((a) =>
      [a.attempt, a.outcome, a.at, a.leaseId, a.error, ...(byColumn ? [byText(a)] : [])].map((v) => String(v ?? '')),
    ),
  );
  return `attempt history (as recorded, oldest first):\n${table}`;
}

const byText = (a: RecordedAttempt): string | undefined =>
  a.by === undefined ? undefined : `${a.by}${a.note === undefined ? '' : ` (${a.note})`}`;

/** The lease's age (since the claim) and how long it has left, or how long ago it expired. */
function leaseSummary(row: Occurrence, now: number): string {
  if (isContinued(row)) return continuedLeaseText(row, now);
  const parts: string[] = [];
  if (row.claimedAt) parts.push(`held for ${duration(now - Date.parse(row.claimedAt))}`);
  if (row.heartbeatAt) parts.push(`last extended ${duration(now - Date.parse(row.heartbeatAt))} ago`);
  if (row.leaseExpiresAt) {
    const left = Date.parse(row.leaseExpiresAt) - now;
    parts.push(
      left >= 0 ? `expires in ${duration(left)}` : `EXPIRED ${duration(-left)} ago (the worker died or lost it)`,
    );
  }
  return parts.join(', ');
}

/** `attempts` or `history`, if the row has a list of them; entries that are not objects are shown as errors. */
export function attemptHistory(row: { attempts?: unknown; history?: unknown }): RecordedAttempt[] | undefined {
  const list = Array.isArray(row.attempts) ? row.attempts : Array.isArray(row.history) ? row.history : undefined;
  if (list === undefined) return undefined;
  return list.map((entry: unknown) =>
    typeof entry === 'object' && entry !== null
      ? (entry as RecordedAttempt)
      : { error: `unreadable entry: ${JSON.stringify(entry)}` },
  );
}
