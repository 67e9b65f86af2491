/**
 * Whether a job that `--job` names exists, for the commands that only read occurrences (list, watch): a query of an
 * unknown job finds no row, just as one of a quiet job does, and "no occurrences" would hide a misspelt id.
 *
 * Asked only when the query found nothing, so a list that finds rows costs nothing more. A job is known when the
 * table has an occurrence of it (in any range) or its job-state row, or, when a flag or the stack names the schedule
 * group, when the group has its schedule (a job deployed but not yet fired has only that). Otherwise the argument is
 * refused as a bad one (exit 2), as `backfill` refuses a job without a schedule. `show` of an occurrence that does not
 * exist says the same of its job, after its own "no occurrence" (exit 4).
 */
import type { OperatorOccurrenceReader } from '../../functions/aws/occurrence-reader';
import { messageOf } from '../../functions/protocol/errors';
import { type Occurrence, SCHEDULED_TIME_RANGE } from '../../functions/protocol/occurrence';
import type { JobStateStore } from '../../functions/protocol/ports';
import { quoteValue } from '../../functions/protocol/quote-value';
import { type JobCatalogue, unknownJobMessage } from './catalogue';
import { ScheduleInputError, UsageError } from './errors';

/** Where a job may show: its rows, its job-state row, its schedule. */
export interface JobSources {
  readonly reader: OperatorOccurrenceReader;
  readonly states?: JobStateStore;
  /** The schedule group's jobs, when the target knows the group. */
  readonly jobs?: JobCatalogue;
  /** `table T at E`, for the message. */
  readonly where?: string;
}

/** What shows that a job exists. */
export type JobEvidence =
  | { readonly kind: 'occurrence'; readonly newest: Occurrence }
  | { readonly kind: 'job-state' }
  | { readonly kind: 'schedule'; readonly group: string };

/** The evidence that `jobId` exists; a UsageError naming `argument` when there is none. */
export async function requireKnownJob(sources: JobSources, jobId: string, argument = '--job'): Promise<JobEvidence> {
  const found = await findJob(sources, jobId);
  if (found.kind === 'unknown') throw new UsageError(`${argument}: ${found.why}`);
  return found;
}

/** The evidence that `jobId` exists, or why it seems not to. */
export async function findJob(
  sources: JobSources,
  jobId: string,
): Promise<JobEvidence | { readonly kind: 'unknown'; readonly why: string }> {
  const { earliest: from, latest: to } = SCHEDULED_TIME_RANGE;
  const [newest] = await sources.reader.listJobNewestFirst(jobId, { from, to, limit: 1 });
  if (newest !== undefined) return { kind: 'occurrence', newest };
  if ((await sources.states?.read(jobId)) !== undefined) return { kind: 'job-state' };
  const inTable = `job ${quoteValue(jobId)} is not in ${sources.where ?? 'the table'}: it has no occurrence and no job-state row`;
  if (sources.jobs === undefined) {
    return {
      kind: 'unknown',
      why:
        `${inTable} (a job deployed but never fired has none either: pass --schedule-group or --stack ` +
        'to look for its schedule)',
    };
  }
  const schedule = await scheduleOf(sources.jobs, jobId);
  if (schedule.found) return { kind: 'schedule', group: sources.jobs.group };
  return { kind: 'unknown', why: `${inTable}, and ${schedule.why}` };
}

/** Whether the group has the job's schedule; a group that cannot be read leaves the table's word as the answer. */
async function scheduleOf(jobs: JobCatalogue, jobId: string): Promise<{ found: true } | { found: false; why: string }> {
  try {
    if ((await jobs.job(jobId)) !== undefined) return { found: true };
    return { found: false, why: await unknownJobMessage(jobs, jobId) };
  } catch (error) {
    // A schedule whose input is not a schedule event is still the job's schedule.
    if (error instanceof ScheduleInputError) return { found: true };
    return { found: false, why: `its schedule in group ${jobs.group} could not be read: ${messageOf(error)}` };
  }
}

/** The sentence `list` adds to "no occurrences" for a job that exists. */
export function evidenceText(evidence: JobEvidence): string {
  switch (evidence.kind) {
    case 'occurrence':
      return `its newest occurrence is scheduled ${evidence.newest.scheduledTime} (${evidence.newest.status})`;
    case 'job-state':
      return 'it has no occurrence in the table (its job-state row exists)';
    case 'schedule':
      return `it has no occurrence yet (its schedule is in group ${evidence.group})`;
  }
}
