/**
 * `occurrences cancel`: an operator's cancel of one occurrence. A PENDING, RETRY_WAIT or BUFFERED one is closed
 * CANCELLED; a RUNNING one loses its lease, so its worker stops at its next heartbeat and commits no report; a
 * finished one, or one whose worker is already committing its report, is refused with the reason and nothing is
 * written. The rules are in functions/protocol/cancel-occurrence.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { z } from 'zod';
import { type CancelResult, cancelOccurrence } from '../../../functions/protocol/cancel-occurrence';
import { isContinuing, isRevokedLease, type OccurrenceKey } from '../../../functions/protocol/occurrence';
import type { CancellableStore } from '../../../functions/protocol/ports';
import { seriesOf } from '../../../functions/protocol/schedule-key';
import {
  byArgument,
  jobIdArgument,
  noteArgument,
  parseArguments,
  scheduledTimeArgument,
  scheduleKeyArgument,
} from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT } from '../errors';

export function registerCancel(program: Command, setup: CommandSetup): void {
  program
    .command('cancel')
    .description(
      'cancel one occurrence: a PENDING, RETRY_WAIT or BUFFERED one is closed, a RUNNING one is stopped through its lease; CANCELLED with who and why',
    )
    .argument('<jobId>', 'the job')
    .argument('<scheduledTime>', 'its scheduled time, ISO-8601 with a zone')
    .option('--note <text>', 'why, recorded in the row (up to 500 characters)')
    .option('--key <scheduleKey>', 'one schedule of a job that takes schedules at run time: its occurrence')
    .option('--by <who>', 'who cancels it (default: <os user>@<host> (<STS caller ARN>))')
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          scheduledTime: scheduledTimeArgument,
          key: scheduleKeyArgument.optional(),
          note: noteArgument.optional(),
          by: byArgument.optional(),
        }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await setup.connect(cmd, {});
      const by = await setup.operator(target, o.by);
      const result = await runCancel(
        setup.deps,
        target.store,
        {
          jobId: seriesOf({ jobId: o.jobId, ...(o.key === undefined ? {} : { scheduleKey: o.key }) }),
          scheduledTime: o.scheduledTime,
        },
        { by, ...(o.note === undefined ? {} : { note: o.note }) },
      );
      if (result.outcome === 'refused') setup.setExitCode(result.status === undefined ? EXIT.notFound : EXIT.refused);
    });
}

export async function runCancel(
  ctx: CommandContext,
  store: CancellableStore,
  key: OccurrenceKey,
  options: { by: string; note?: string },
): Promise<CancelResult> {
  const name = `${key.jobId} ${key.scheduledTime}`;
  const result = await cancelOccurrence({ store, clock: ctx.clock, newId: randomUUID }, key, options);
  if (result.outcome === 'refused') {
    ctx.io.err(`refused to cancel ${name}: ${result.reason}`);
    return result;
  }
  ctx.io.out(`cancelled ${name} as ${options.by}: ${whatHappens(result)}`);
  return result;
}

/** What the cancel means for the occurrence, from the row as it was. */
function whatHappens(result: Extract<CancelResult, { outcome: 'cancelled' }>): string {
  const { previous, stopsBy } = result;
  if (stopsBy !== undefined) {
    return (
      `it was RUNNING (attempt ${previous.attempt}, ${previous.leaseOwner ?? 'a worker'}); its worker stops at its next ` +
      `heartbeat, by ${stopsBy} at the latest, and commits no report.`
    );
  }
  if (isContinuing(previous)) return 'it was RUNNING between two segments of a resumable run; no segment follows.';
  if (isRevokedLease(previous) || previous.status === 'RUNNING')
    return 'it was RUNNING under a lease nobody holds any more; it will not run again.';
  return `it was ${previous.status}; it will not run.`;
}
