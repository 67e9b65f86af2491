/**
 * `occurrences describe`: one job at a glance. Its schedule and time zone (from Scheduler), whether it is paused and
 * why, its running slot and buffer (the job-state row), the next 10 fire times by Scheduler's daylight-saving rule,
 * the newest 10 occurrences, and counts of SKIPPED for overlap, SKIPPED as missed and FAILED among the newest
 * `--rows` rows. The reads are describeJob in functions/protocol/job-control.ts.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { DESCRIBE_NEXT, describeJob, type JobDescription, pauseSummary } from '../../../functions/protocol/job-control';
import type { Occurrence } from '../../../functions/protocol/occurrence';
import { statusReason } from '../../../functions/protocol/status-reason';
import { jobIdArgument, parseArguments, scheduleKeyArgument, wholeNumberArgument } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { fieldTable, plainTable } from '../format';
import { catalogueOf, historyOf } from '../target';
import { deployedJob } from './backfill';
import { isKeyedTemplate, scheduleCount, scheduleOfJob } from './keyed-job';

export function registerDescribe(program: Command, setup: CommandSetup): void {
  program
    .command('describe')
    .description('a job: schedule, paused or not, next fire times, newest occurrences, skipped/missed/failed counts')
    .argument('<jobId>', 'the job')
    .option('--rows <n>', 'newest occurrences to count over, 10-1000', '100')
    .option('--key <scheduleKey>', 'one schedule of a job that takes schedules at run time (from the registry)')
    .option('--registry-table <name>', 'with --key: the schedule registry table (instead of the stack output)')
    .option('--json', 'the description as JSON')
    .action(async (jobId: string, raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          jobId: jobIdArgument,
          rows: wholeNumberArgument(10, 1000),
          key: scheduleKeyArgument.optional(),
          registryTable: z.string().optional(),
          json: z.boolean().default(false),
        }),
        { jobId, ...raw },
        ['jobId'],
      );
      const target = await setup.connect(cmd, { jobs: true });
      const template = await deployedJob(catalogueOf(target), o.jobId, '<jobId>');
      const job = o.key === undefined ? template : await scheduleOfJob(cmd, setup, template, o.key);
      const deps = { states: target.states, clock: setup.deps.clock, history: historyOf(target) };
      const description = await describeJob(deps, job, { rows: o.rows });
      // The template's own expression never fires: say that its schedules are per key, and how many there are.
      const keys = isKeyedTemplate(job) ? await scheduleCount(cmd, setup, job.id) : undefined;
      if (o.json)
        setup.deps.io.out(
          JSON.stringify(keys === undefined ? description : { ...description, scheduleKeys: keys }, null, 2),
        );
      else printDescription(setup.deps, description, keys);
    });
}

/** `keys`: for a job that takes schedules at run time (no --key), how many the registry holds. */
export function printDescription(ctx: CommandContext, d: JobDescription, keys?: string): void {
  const { job, state } = d;
  const schedule =
    keys === undefined
      ? `${job.schedule} in ${job.timeZone} (Scheduler: ${job.state})`
      : `one per schedule key, created at run time: ${keys} in the registry (occurrences schedules list ${job.id}; describe one with --key)`;
  ctx.io.out(
    fieldTable([
      ['job', job.scheduleKey === undefined ? job.id : `${job.id} schedule ${job.scheduleKey}`],
      ['schedule', schedule],
      ['worker', job.route.worker],
      ['overlap', job.overlap],
      ['state', d.paused && state ? `PAUSED ${pauseSummary(state)}` : 'not paused'],
      ['last resumed', state?.resumedAt && `${state.resumedAt} by ${state.resumedBy ?? 'unknown'}`],
      ['running slot', state?.slotTime && `held by the occurrence of ${state.slotTime}`],
      ['buffered', state?.buffer?.length ? `${state.buffer.length}: ${state.buffer.join(', ')}` : undefined],
      ['failures in a row', state?.consecutiveFailures ? String(state.consecutiveFailures) : undefined],
    ]),
  );
  if (keys === undefined) {
    const paused = d.paused || job.state !== 'ENABLED' ? ' (the schedule fires none of them while it is off)' : '';
    ctx.io.out(`next ${DESCRIBE_NEXT} fire times${paused}:`);
    ctx.io.out(
      plainTable(
        ['UTC', `${job.timeZone}`],
        d.next.map((t) => [t, localTime(t, job.timeZone)]),
      ),
    );
  }
  ctx.io.out(`newest ${d.recent.length} occurrence(s):`);
  ctx.io.out(plainTable(['scheduled', 'started', 'finished', 'status', 'detail'], d.recent.map(recentRow)));
  const c = d.counts;
  ctx.io.out(
    `among the newest ${c.read} occurrence(s): ${c.skippedForOverlap} skipped for overlap, ${c.missed} missed, ` +
      `${c.failed} failed`,
  );
}

function recentRow(o: Occurrence): string[] {
  const finished = o.succeededAt ?? o.failedAt ?? o.skippedAt ?? o.cancelledAt ?? '';
  return [o.scheduledTime, o.claimedAt ?? '', finished, o.status, recentDetail(o)];
}

function recentDetail(o: Occurrence): string {
  const parts = [
    // The same words as list's detail column.
    o.status === 'SKIPPED' || o.status === 'CANCELLED' ? statusReason(o) : undefined,
    o.origin && `${o.origin} by ${o.requestedBy ?? 'unknown'}`,
    o.status === 'FAILED' && o.lastError ? o.lastError.slice(0, 60) : undefined,
  ];
  return parts.filter(Boolean).join('; ');
}

const LOCAL = new Map<string, Intl.DateTimeFormat>();

/** `2027-03-29 02:30 GMT+2`: the wall-clock time in the job's time zone, with its offset. */
function localTime(isoTime: string, timeZone: string): string {
  let format = LOCAL.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('sv-SE', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'shortOffset',
    });
    LOCAL.set(timeZone, format);
  }
  return format.format(new Date(isoTime));
}
