/**
 * `occurrences retry`: reopen a FAILED occurrence and enqueue it; with --force, enqueue one more message for a
 * PENDING, RETRY_WAIT or expired-lease RUNNING one. The rules are in functions/protocol/manual-retry.ts.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import {
  type ManualRetryResult,
  type ReopenableStore,
  retryOccurrence,
} from '../../../functions/protocol/manual-retry';
import type { OccurrenceKey } from '../../../functions/protocol/occurrence';
import type { WorkQueue } from '../../../functions/protocol/ports';
import { jobIdArgument, parseArguments, scheduledTimeArgument } from '../arguments';
import { type CommandContext, type CommandSetup, settingsById } from '../context';
import { EXIT } from '../errors';
import { jobQueueOf } from '../target';

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
    .action(async (jobId: string, scheduledTime: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({ jobId: jobIdArgument, scheduledTime: scheduledTimeArgument, force: z.boolean().default(false) }),
        { jobId, scheduledTime, ...raw },
        ['jobId', 'scheduledTime'],
      );
      const target = await setup.connect(cmd, { queue: true });
      const result = await runRetry(
        setup.deps,
        { store: target.store, queue: jobQueueOf(target) },
        { jobId: o.jobId, scheduledTime: o.scheduledTime },
        { force: o.force },
      );
      if (result.outcome === 'refused') setup.setExitCode(EXIT.refused);
    });
}

export async function runRetry(
  ctx: CommandContext,
  deps: { store: ReopenableStore; queue: Pick<WorkQueue, 'send'> },
  key: OccurrenceKey,
  options: { force: boolean },
): Promise<ManualRetryResult> {
  const result = await retryOccurrence({ ...deps, clock: ctx.clock, jobs: settingsById(ctx.jobs) }, key, options);
  const name = `${key.jobId} ${key.scheduledTime}`;
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
