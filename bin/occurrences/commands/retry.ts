/**
 * `occurrences retry`: reopen a FAILED occurrence and enqueue it; with --force, enqueue one more message for a
 * PENDING, RETRY_WAIT or expired-lease RUNNING one. The rules are in functions/protocol/manual-retry.ts. The job's
 * worker, deadline and retention are those of its deployed schedule (catalogue.ts), and the message goes to that
 * worker's queue; a job without a schedule (disabled, or not deployed) is refused.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { type ManualRetryResult, retryOccurrence } from '../../../functions/protocol/manual-retry';
import type { OccurrenceKey } from '../../../functions/protocol/occurrence';
import type { ReopenableStore, WorkQueue } from '../../../functions/protocol/ports';
import { byArgument, jobIdArgument, parseArguments, scheduledTimeArgument, scheduleKeyArgument } from '../arguments';
import { type JobCatalogue, unknownJobMessage } from '../catalogue';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT } from '../errors';
import { catalogueOf, queueFor, queuesOf, type WorkerQueues } from '../target';

export function registerRetry(program: Command, setup: CommandSetup): void {
  program
    .command('retry')
    .description(
      're-enqueue a FAILED occurrence (conditional); --force re-enqueues a PENDING, RETRY_WAIT or expired RUNNING one',
    )
    .argument('<jobId>', 'the job')
    .argument('<scheduledTime>', 'its scheduled time, ISO-8601 with a zone')
    .option(
      '--force',
      'enqueue one more message for a PENDING, RETRY_WAIT or expired-lease RUNNING occurrence; ' +
        'never for SUCCEEDED or a live lease',
    )
    .option('--key <scheduleKey>', 'one schedule of a job that takes schedules at run time: its occurrence')
    .option(
      '--by <who>',
      "who retries it, recorded in the row's history (default: <os user>@<host> (<AWS caller ARN>))",
    )
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          scheduledTime: scheduledTimeArgument,
          key: scheduleKeyArgument.optional(),
          force: z.boolean().default(false),
          by: byArgument.optional(),
        }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await setup.connect(cmd, { jobs: true, queues: true });
      const result = await runRetry(
        setup.deps,
        { store: target.store, jobs: catalogueOf(target), queues: queuesOf(target) },
        { jobId: o.jobId, ...(o.key === undefined ? {} : { scheduleKey: o.key }), scheduledTime: o.scheduledTime },
        { force: o.force, by: await setup.operator(target, o.by) },
      );
      if (result.outcome === 'refused') setup.setExitCode(EXIT.refused);
    });
}

export async function runRetry(
  ctx: CommandContext,
  deps: { store: ReopenableStore; jobs: JobCatalogue; queues: WorkerQueues },
  key: OccurrenceKey,
  options: { force: boolean; by?: string },
): Promise<ManualRetryResult> {
  const schedule = key.scheduleKey === undefined ? '' : ` schedule ${key.scheduleKey}`;
  const name = `${key.jobId}${schedule} ${key.scheduledTime}`;
  const job = await deps.jobs.job(key.jobId);
  if (job === undefined) {
    const reason = await unknownJobMessage(deps.jobs, key.jobId);
    ctx.io.err(`refused to retry ${name}: ${reason}`);
    return { outcome: 'refused', reason, forceWouldEnqueue: false };
  }
  const queue: Pick<WorkQueue, 'send'> = queueFor(deps.queues, job);
  const result = await retryOccurrence(
    {
      store: deps.store,
      queues: new Map([[job.route.worker, queue]]),
      clock: ctx.clock,
      jobs: new Map([[job.id, job.route]]),
    },
    key,
    options,
  );
  switch (result.outcome) {
    case 'reopened': {
      const lastError = result.previous.lastError ?? 'no error recorded';
      ctx.io.out(
        `retrying ${name}: it was FAILED after ${result.previous.attempt} attempt(s) (${lastError}); ` +
          `reopened as PENDING with a fresh attempt budget and deadline ${result.deadlineAt}, and enqueued.`,
      );
      break;
    }
    case 'enqueued':
      ctx.io.out(
        `enqueued ${name} again (forced; it is ${result.status} and its row was left as it was): ${result.note}`,
      );
      break;
    case 'refused':
      ctx.io.err(`refused to retry ${name}: ${result.reason}`);
      break;
  }
  return result;
}
