/**
 * `occurrences run`: an occurrence of a job now, as if its schedule fired this second, marked in its row as
 * requested (`requestedBy`, `origin: run`) and enqueued on its worker's queue. The worker applies the job's overlap
 * policy, or the one `--overlap` gives this occurrence (`allowAll` runs it beside a running one). Refused while the
 * job is paused (the worker would only record it SKIPPED). The rules are runJobNow in
 * functions/protocol/job-control.ts.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { type DeployedJob, type RunResult, runJobNow } from '../../../functions/protocol/job-control';
import { byArgument, jobIdArgument, overlapArgument, parseArguments, scheduleKeyArgument } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT } from '../errors';
import { catalogueOf, queueFor, queuesOf } from '../target';
import { deployedJob } from './backfill';
import { jobOrScheduleOf } from './keyed-job';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function registerRun(program: Command, setup: CommandSetup): void {
  program
    .command('run')
    .description("record and enqueue an occurrence of a job now; the worker applies the job's overlap policy")
    .argument('<jobId>', 'the job')
    .option(
      '--key <scheduleKey>',
      'one schedule of a job that takes schedules at run time: the occurrence carries its key and input',
    )
    .option(
      '--overlap <policy>',
      "this occurrence's own policy instead of the job's: skip, bufferOne, bufferAll, cancelOther, allowAll",
    )
    .option('--by <who>', 'who asks (default: <os user>@<host> (<AWS caller ARN>))')
    .option('--json', 'the result as JSON')
    .action(async (jobId: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          key: scheduleKeyArgument.optional(),
          overlap: overlapArgument.optional(),
          by: byArgument.optional(),
          json: z.boolean().default(false),
        }),
        { jobId, ...raw },
        ['jobId'],
      );
      const target = await setup.connect(cmd, { jobs: true, queues: true });
      const deployed = await deployedJob(catalogueOf(target), o.jobId, '<jobId>');
      const job = await jobOrScheduleOf(cmd, setup, deployed, o.key, 'run');
      const queues = queuesOf(target);
      queueFor(queues, job); // an unknown queue is refused here, before anything is written
      const clock = setup.deps.clock;
      const result = await runJobNow(
        {
          states: target.states,
          clock,
          trigger: { store: target.store, queues: queues.byWorker, clock, logger: quiet },
        },
        job,
        { by: await setup.operator(target, o.by), overlap: o.overlap },
      );
      printRun(setup.deps, job, result, o);
      if (result.outcome === 'refused') setup.setExitCode(EXIT.refused);
    });
}

const OUTCOME_WORDS: Record<Exclude<RunResult['outcome'], 'refused'>, string> = {
  recorded: 'recorded and enqueued',
  'pending-re-enqueued': 'was recorded already and is still PENDING: enqueued again',
  'duplicate-suppressed': 'was recorded already and has been claimed or finished: left alone',
  'recorded-missed': 'recorded as SKIPPED (missed)',
};

function printRun(
  ctx: CommandContext,
  job: DeployedJob,
  result: RunResult,
  o: { overlap?: string; json: boolean },
): void {
  const name = job.scheduleKey === undefined ? job.id : `${job.id} schedule ${job.scheduleKey}`;
  if (o.json) {
    ctx.io.out(
      JSON.stringify(result.outcome === 'refused' ? { outcome: 'refused', reason: result.reason } : result, null, 2),
    );
    return;
  }
  if (result.outcome === 'refused') {
    ctx.io.err(`refused to run ${name}: ${result.reason}`);
    return;
  }
  const policy = o.overlap === undefined ? "the job's overlap policy applies" : `overlap ${o.overlap} for this one`;
  ctx.io.out(`${name} ${result.scheduledTime} ${OUTCOME_WORDS[result.outcome]} (${policy}).`);
  if (result.outcome !== 'recorded') return;
  ctx.io.out(
    job.scheduleKey === undefined
      ? `follow it: occurrences show ${job.id} ${result.scheduledTime}`
      : `follow it: occurrences list --job ${job.id} --key ${job.scheduleKey}`,
  );
}
