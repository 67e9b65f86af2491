/**
 * `occurrences show`: one occurrence in full, from a consistent read of its row: status, attempts, deadline, the
 * lease and its age, the retry state, the report's location, the notification, manual retries, and the attempt
 * history when the row records one.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OperatorOccurrenceStore } from '../../../functions/aws/occurrence-store';
import type { ManualRetryFields } from '../../../functions/protocol/manual-retry';
import { type Occurrence, type OccurrenceKey, REPORT_KEY_PREFIX } from '../../../functions/protocol/occurrence';
import { jobIdArgument, parseArguments, scheduledTimeArgument } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT } from '../errors';
import { duration, fieldTable, plainTable, when } from '../format';
import { continuedLeaseText, isContinued, runFields } from '../run-progress';

export function registerShow(program: Command, setup: CommandSetup): void {
  program
    .command('show')
    .description('one occurrence in full: lease age, attempts, errors, report location')
    .argument('<jobId>', 'the job')
    .argument('<scheduledTime>', 'its scheduled time, ISO-8601 with a zone')
    .option('--json', 'the raw row as JSON')
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({ jobId: jobIdArgument, scheduledTime: scheduledTimeArgument, json: z.boolean().default(false) }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await setup.connect(cmd, { bucket: true });
      const row = await runShow(
        setup.deps,
        target.store,
        { jobId: o.jobId, scheduledTime: o.scheduledTime },
        { json: o.json, bucketName: target.bucketName },
      );
      if (row === undefined) {
        setup.deps.io.err(`no occurrence ${o.jobId} ${o.scheduledTime} in ${target.where}`);
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
}

type ShownRow = Occurrence & ManualRetryFields & { attempts?: unknown; history?: unknown };

export async function runShow(
  ctx: CommandContext,
  store: OperatorOccurrenceStore,
  key: OccurrenceKey,
  options: { json: boolean; bucketName?: string },
): Promise<Occurrence | undefined> {
  const row = (await store.get(key)) as ShownRow | undefined;
  if (row === undefined) return undefined;
  if (options.json) {
    ctx.io.out(JSON.stringify(row, null, 2));
    return row;
  }
  ctx.io.out(describeOccurrence(ctx, row, options.bucketName));
  return row;
}

export function describeOccurrence(ctx: CommandContext, row: ShownRow, bucketName: string | undefined): string {
  const now = ctx.clock.now();
  return `${fieldTable(occurrenceFields(row, bucketName, now))}\n${historyText(row)}`;
}

function occurrenceFields(
  row: ShownRow,
  bucketName: string | undefined,
  now: number,
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
    ['last error', row.lastError],
    ['succeeded', when(row.succeededAt, now)],
    ['failed', when(row.failedAt, now)],
    ['worker', row.worker],
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
  return `none committed yet; it will be under ${s3(`${REPORT_KEY_PREFIX}${row.jobId}/`)}`;
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
  const table = plainTable(
    ['attempt', 'outcome', 'at', 'lease id', 'error'],
    history.map((a) => [a.attempt, a.outcome, a.at, a.leaseId, a.error].map((v) => String(v ?? ''))),
  );
  return `attempt history (as recorded, oldest first):\n${table}`;
}

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
