/**
 * `npm run local`: the whole pipeline on this machine against moto. Starts the emulator, creates the stack's data
 * resources, fires the configured jobs for a few occurrences (each fired twice, as an at-least-once Scheduler may),
 * runs the workers and the notifier, and prints a table of the occurrences and where the reports are.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Table from 'cli-table3';
import { Command, InvalidArgumentError } from 'commander';
import { sampleJobs } from '../bin/jobs';
import { UsageError } from '../bin/occurrences/errors';
import { jobs as implementations } from '../functions/jobs';
import type { Occurrence } from '../functions/protocol/occurrence';
import { ScheduleError } from '../functions/protocol/schedule-times';
import { JobConfigError } from '../lib/errors';
import { type ResolvedJobConfig, resolveJobConfigs } from '../lib/job-config';
import { type MotoServer, MotoUnavailableError, startMotoServer } from './local/moto-server';
import { LocalPipeline } from './local/pipeline';
import { type FireOutcome, planFires, type ScheduledFire } from './local/scheduler';

const OUT_DIR = path.resolve(__dirname, '..', '.local');
const MAX_COUNT = 50;

interface Options {
  readonly from?: Date;
  readonly count: number;
  readonly jobs?: string[];
  readonly workers: number;
  readonly timeout: number;
  readonly keep: boolean;
}

function parseArgs(argv: string[]): Options {
  const positive =
    (name: string, max: number) =>
    (value: string): number => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > max)
        throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
      return n;
    };
  const program = new Command('npm run local --')
    .description('Run the scheduled-job pipeline locally against moto and print the occurrences.')
    .option(
      '--from <time>',
      'fire the occurrences at or after this ISO time, at once (default: now)',
      (value: string) => {
        const t = new Date(value);
        if (Number.isNaN(t.getTime()))
          throw new InvalidArgumentError(
            `--from must be an ISO date-time such as 2026-11-30T06:00:00Z, got ${JSON.stringify(value)}`,
          );
        return t;
      },
    )
    .option('--count <n>', `occurrences per job, 1-${MAX_COUNT}`, positive('--count', MAX_COUNT), 3)
    .option('--jobs <ids>', 'comma-separated job ids (default: every enabled job)', (value: string) =>
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .option('--workers <n>', 'concurrent worker pollers, 1-20', positive('--workers', 20), 2)
    .option(
      '--timeout <seconds>',
      'give up waiting for the occurrences after this long, 1-3600',
      positive('--timeout', 3600),
      120,
    )
    .option('--keep', 'leave moto running afterwards and print how to inspect it', false)
    .showHelpAfterError()
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2));
  program.parse(argv, { from: 'user' });
  return program.opts<Options>();
}

function selectJobs(all: readonly ResolvedJobConfig[], ids: string[] | undefined): ResolvedJobConfig[] {
  if (ids === undefined) return all.filter((j) => j.enabled);
  const unknown = ids.filter((id) => !all.some((j) => j.settings.id === id));
  if (unknown.length > 0) {
    throw new UsageError(
      `--jobs: unknown job id(s) ${unknown.join(', ')}; the configured jobs are ${all.map((j) => j.settings.id).join(', ')}`,
    );
  }
  return all.filter((j) => ids.includes(j.settings.id));
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  // Every sample job runs in the local run's one worker, from its implementation in functions/jobs/index.ts.
  const resolved = resolveJobConfigs(sampleJobs.map(({ entry: _entry, ...config }) => config));
  const selected = selectJobs(resolved, options.jobs);
  // Accelerated: the next occurrences are fired now instead of at their time. Occurrences whose retry deadline
  // (scheduled time + retry.deadlineSeconds) has passed are FAILED at once, as deployed.
  const fires = planFires(selected, { from: options.from ?? new Date(), count: options.count, now: new Date() });
  if (fires.length === 0)
    throw new UsageError('no occurrences to fire: the selected schedules do not fire in that range');

  rmSync(OUT_DIR, { recursive: true, force: true });
  mkdirSync(OUT_DIR, { recursive: true });

  step('starting moto_server');
  const moto = await startMotoServer({ log: (line) => console.log(line) });
  console.log(`  emulator at ${moto.endpoint}`);
  try {
    const logLines: string[] = [];
    step('creating the table, queues, bucket and topic from functions/protocol/table-schema.ts');
    const pipeline = await LocalPipeline.create({
      endpoint: moto.endpoint,
      settings: resolved.map((j) => j.settings),
      jobs: implementations,
      workers: options.workers,
      log: (line) => logLines.push(line),
    });
    const jobIds = selected.map((j) => j.settings.id).join(', ');
    const rows = await fireTwiceThenLate(pipeline, fires, jobIds, options.timeout * 1000);
    const ok = await printSummary(pipeline, fires, rows, logLines);
    if (options.keep) await keepRunning(moto, pipeline);
    return ok ? 0 : 1;
  } finally {
    if (!options.keep) await moto.stop();
  }
}

type Row = Occurrence | undefined;

/**
 * Fires every occurrence twice at once (an at-least-once Scheduler may), waits until all are finished and announced,
 * then fires each once more, late, and stops the pollers. Returns the rows as they were once settled.
 */
async function fireTwiceThenLate(
  pipeline: LocalPipeline,
  fires: readonly ScheduledFire[],
  jobIds: string,
  timeoutMs: number,
): Promise<Row[]> {
  pipeline.start();
  step(`firing ${fires.length} occurrence(s) of ${jobIds}, each twice at once`);
  printOutcomes(await pipeline.fire(fires, 2));

  step('running the workers and the notifier');
  const rows = await pipeline.waitUntilSettled(fires, timeoutMs, progress());
  process.stdout.write('\n');

  step('firing every occurrence once more, late, as a redelivering Scheduler would');
  printOutcomes(await pipeline.fire(fires, 1));
  await pipeline.waitUntilSettled(fires, timeoutMs);
  await pipeline.stop();
  return rows;
}

/** The occurrence table, the counts, where the reports and logs are; true when every occurrence SUCCEEDED. */
async function printSummary(
  pipeline: LocalPipeline,
  fires: readonly ScheduledFire[],
  rows: readonly Row[],
  logLines: readonly string[],
): Promise<boolean> {
  const announcements = await pipeline.drainAnnouncements();
  const reportFiles = await pipeline.downloadReports(path.join(OUT_DIR));
  const logFile = path.join(OUT_DIR, 'handlers.log');
  writeFileSync(logFile, `${logLines.join('\n')}\n`);

  console.log();
  console.log(occurrenceTable(fires.map((f, i) => rows[i] ?? { ...f, status: 'MISSING' })));
  for (const r of rows) {
    if (r?.lastError !== undefined && r.status !== 'SUCCEEDED')
      console.log(`  ${r.jobId} ${r.scheduledTime}: ${r.lastError}`);
  }
  console.log();
  const totals = pipeline.workerSource.totals;
  console.log(
    `worker invocations ${totals.invocations}, messages received ${totals.received}, ` +
      `announcements on the report-ready topic ${announcements.length}, messages in the job DLQ ${await pipeline.deadLetterCount()}`,
  );
  const copies = reportFiles.length > 0 ? `${path.relative(process.cwd(), path.dirname(reportFiles[0]))}/` : 'none';
  console.log(`reports in the emulator: s3://${pipeline.resources.bucketName}/reports/ ; copies: ${copies}`);
  console.log(`handler logs (JSON lines): ${path.relative(process.cwd(), logFile)}`);

  const succeeded = rows.filter((r) => r?.status === 'SUCCEEDED').length;
  const ok = succeeded === fires.length;
  console.log(
    ok
      ? `\nall ${fires.length} occurrence(s) SUCCEEDED`
      : `\n${fires.length - succeeded} of ${fires.length} occurrence(s) did not succeed; see the log`,
  );
  return ok;
}

function occurrenceTable(
  rows: ReadonlyArray<Occurrence | { jobId: string; scheduledTime: string; status: string }>,
): string {
  const table = new Table({
    head: ['job', 'scheduled time', 'status', 'attempts', 'duration', 'report key'],
    style: { head: [], border: [] }, // plain text: the output is often piped or pasted
  });
  for (const r of rows) {
    const o = r as Partial<Occurrence> & { jobId: string; scheduledTime: string; status: string };
    const end = o.succeededAt ?? o.failedAt;
    const duration =
      o.claimedAt !== undefined && end !== undefined
        ? `${((Date.parse(end) - Date.parse(o.claimedAt)) / 1000).toFixed(2)} s`
        : '';
    table.push([o.jobId, o.scheduledTime, o.status, String(o.attempt ?? ''), duration, o.reportKey ?? '']);
  }
  return table.toString();
}

async function keepRunning(moto: MotoServer, pipeline: LocalPipeline): Promise<void> {
  const r = pipeline.resources;
  console.log(`\nmoto keeps running at ${moto.endpoint}. Inspect it with the AWS CLI (any credentials work):`);
  console.log(`  aws --endpoint-url ${moto.endpoint} --region us-east-1 dynamodb scan --table-name ${r.tableName}`);
  console.log(
    `  aws --endpoint-url ${moto.endpoint} --region us-east-1 s3 ls s3://${r.bucketName}/reports/ --recursive`,
  );
  console.log(
    `  aws --endpoint-url ${moto.endpoint} --region us-east-1 sqs get-queue-attributes --queue-url ${r.jobDeadLetterQueueUrl} --attribute-names All`,
  );
  console.log('Press Ctrl-C to stop it.');
  await new Promise<never>(() => undefined); // moto-server.ts stops moto on Ctrl-C
}

function printOutcomes(outcomes: readonly FireOutcome[]): void {
  const counts = countBy(outcomes.map((o) => (o.ok ? o.result : `trigger failed: ${o.error}`)));
  for (const [result, n] of counts) console.log(`  ${String(n).padStart(3)} × ${result}${EXPLAIN[result] ?? ''}`);
}

const EXPLAIN: Record<string, string> = {
  recorded: ' (the row was created and the occurrence enqueued)',
  'pending-re-enqueued': ' (the row was still PENDING: enqueued again, harmless because the claim is conditional)',
  'duplicate-suppressed': ' (the occurrence was already running or finished: nothing enqueued)',
};

function step(text: string): void {
  console.log(`▸ ${text}`);
}

/** One line rewritten in place on a terminal; only the last state when the output is piped. */
function progress(): (settled: number, total: number) => void {
  const started = Date.now();
  return (settled, total) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const line = `  ${settled}/${total} occurrence(s) finished and announced (${seconds} s)`;
    if (process.stdout.isTTY) process.stdout.write(`\r${line}`);
    else if (settled === total) process.stdout.write(line);
  };
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      error instanceof JobConfigError ||
      error instanceof ScheduleError ||
      error instanceof MotoUnavailableError
    ) {
      console.error(
        `error: ${error.message}${error instanceof UsageError ? ' (npm run local -- --help lists the options)' : ''}`,
      );
      process.exit(error instanceof UsageError ? 2 : 1);
    }
    console.error(error);
    process.exit(1);
  },
);
