/**
 * `occurrences pause`: switch a job's Scheduler schedule off (its definition kept) and record who paused it, when and
 * why in the job's job-state row. The rules are pauseJob in functions/protocol/job-control.ts; resume.ts undoes it.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { type PauseResult, pauseJob, pauseSummary } from '../../../functions/protocol/job-control';
import { byArgument, jobIdArgument, noteArgument, parseArguments } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { catalogueOf, schedulesOf } from '../target';
import { deployedJob } from './backfill';

export function registerPause(program: Command, setup: CommandSetup): void {
  program
    .command('pause')
    .description("disable a job's schedule (its definition kept) and record who paused it, when and why")
    .argument('<jobId>', 'the job')
    .requiredOption('--note <text>', 'why, for whoever finds the job paused (up to 500 characters)')
    .option('--by <who>', 'who pauses it (default: <os user>@<host> (<AWS caller ARN>))')
    .option('--json', 'the job-state row after the pause, as JSON')
    .action(async (jobId: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          note: noteArgument,
          by: byArgument.optional(),
          json: z.boolean().default(false),
        }),
        { jobId, ...raw },
        ['jobId'],
      );
      const target = await setup.connect(cmd, { jobs: true });
      const job = await deployedJob(catalogueOf(target), o.jobId, '<jobId>');
      const deps = { states: target.states, clock: setup.deps.clock, schedules: schedulesOf(target) };
      const result = await pauseJob(deps, job.id, { note: o.note, by: await setup.operator(target, o.by) });
      printPause(setup.deps, job.id, result, o.json);
    });
}

function printPause(ctx: CommandContext, jobId: string, result: PauseResult, json: boolean): void {
  if (json) {
    ctx.io.out(JSON.stringify({ outcome: result.outcome, state: result.state }, null, 2));
    return;
  }
  const summary = pauseSummary(result.state);
  ctx.io.out(
    result.outcome === 'paused'
      ? `paused ${jobId} ${summary}; its schedule is DISABLED. Occurrences already in flight are SKIPPED (paused).`
      : `${jobId} was paused already, ${summary} (kept); its schedule is DISABLED.`,
  );
}
