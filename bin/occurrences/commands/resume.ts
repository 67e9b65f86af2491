/**
 * `occurrences resume`: clear a job's pause, switch its schedule on, and catch up on the fire times it missed: those
 * inside the job's catch-up window are recorded and enqueued as the trigger would have (the worker applies the
 * overlap policy), older ones inside the retention are recorded SKIPPED (missed), older ones still are counted. The
 * rules are resumeJob in functions/protocol/job-control.ts.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { type CatchUp, type DeployedJob, type ResumeResult, resumeJob } from '../../../functions/protocol/job-control';
import type { JobState } from '../../../functions/protocol/job-state';
import type { TriggerResult } from '../../../functions/protocol/record-occurrence';
import { byArgument, jobIdArgument, parseArguments } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { duration } from '../format';
import { catalogueOf, historyOf, queuesOf, schedulesOf } from '../target';
import { deployedJob } from './backfill';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function registerResume(program: Command, setup: CommandSetup): void {
  program
    .command('resume')
    .description(
      "enable a paused job's schedule; run the times it missed inside its catch-up window, record older ones as missed",
    )
    .argument('<jobId>', 'the job')
    .option('--by <who>', 'who resumes it (default: <os user>@<host> (<AWS caller ARN>))')
    .option('--json', 'what was done, as JSON')
    .action(async (jobId: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({ jobId: jobIdArgument, by: byArgument.optional(), json: z.boolean().default(false) }),
        { jobId, ...raw },
        ['jobId'],
      );
      const target = await setup.connect(cmd, { jobs: true, queues: true });
      const job = await deployedJob(catalogueOf(target), o.jobId, '<jobId>');
      const clock = setup.deps.clock;
      const queues = queuesOf(target).byWorker;
      const result = await resumeJob(
        {
          states: target.states,
          clock,
          schedules: schedulesOf(target),
          trigger: { store: target.store, queues, clock, logger: quiet },
          history: historyOf(target),
        },
        job,
        { by: await setup.operator(target, o.by) },
      );
      printResume(setup.deps, job, result, o.json);
    });
}

function printResume(ctx: CommandContext, job: DeployedJob, result: ResumeResult, json: boolean): void {
  if (json) {
    ctx.io.out(JSON.stringify(result, null, 2));
    return;
  }
  if (result.outcome === 'not-paused') {
    ctx.io.out(`${job.id} is not paused${resumedNote(result.state)}; its schedule is ENABLED. Nothing to catch up.`);
    return;
  }
  const { paused, catchUp } = result;
  ctx.io.out(
    `resumed ${job.id} (paused since ${paused.pausedAt} by ${paused.pausedBy ?? 'unknown'}: ${paused.pauseNote ?? 'no note'}); ` +
      'its schedule is ENABLED.',
  );
  const window = duration((job.route.catchupWindowSeconds ?? job.route.deadlineSeconds) * 1000);
  ctx.io.out(catchUpLines(catchUp, window, job.route.retentionDays).join('\n'));
}

function resumedNote(state: JobState | undefined): string {
  return state?.resumedAt === undefined ? '' : ` (resumed ${state.resumedAt} by ${state.resumedBy ?? 'unknown'})`;
}

const count = (results: Partial<Record<TriggerResult, number>>) =>
  Object.values(results).reduce((a: number, b) => a + (b ?? 0), 0);

/** ` (n were recorded already)`: times the schedule (or an earlier resume) had recorded; their rows were left alone. */
function alreadyRecorded(results: Partial<Record<TriggerResult, number>>): string {
  const n = (results['duplicate-suppressed'] ?? 0) + (results['pending-re-enqueued'] ?? 0);
  return n > 0 ? ` (${n} were recorded already)` : '';
}

/** What the catch-up did: the times run, the times recorded as missed, the times only counted. */
function catchUpLines(catchUp: CatchUp, window: string, retentionDays: number): string[] {
  const { inWindow, missed } = catchUp;
  const lines = [
    `inside the catch-up window (${window}): ${catchUp.runTimes.length} fire time(s), ` +
      `${inWindow.recorded ?? 0} recorded and enqueued${alreadyRecorded(inWindow)}; ` +
      "the job's overlap policy decides how they run",
    ...catchUp.runTimes.map((t) => `  ${t}`),
    `older, inside the retention (${retentionDays} day(s)): ${count(missed)} fire time(s), ` +
      `${missed['recorded-missed'] ?? 0} recorded as SKIPPED (missed)${alreadyRecorded(missed)}`,
  ];
  if (catchUp.olderThanRetention > 0)
    lines.push(
      `older than the retention: ${catchUp.countCapped ? 'at least ' : ''}${catchUp.olderThanRetention} fire time(s), ` +
        'not recorded (TTL would delete their rows at once)',
    );
  return lines;
}
