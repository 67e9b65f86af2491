/**
 * `npm run local`: this repository's sample app run the way a user's app runs on this machine. `cdk synth` writes the
 * cloud assembly, then `runLocally` (the package's ./testing) creates the template's resources and schedules in
 * moto, loads the bundled functions and fires the jobs' next occurrences. It prints each occurrence with why it is
 * what it is, and exits 0 exactly when every occurrence ended as its job's policies dictate.
 */
import { execFile } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { normaliseScheduledTime } from '../functions/protocol/occurrence';
import { AssemblyError } from '../testing/errors';
import { formatLocalRun } from '../testing/local/format';
import { waitForCtrlC } from '../testing/local/keep';
import { MotoUnavailableError } from '../testing/local/moto-server';
import {
  type KeptLocalRun,
  LOCAL_RUN_LIMITS,
  type LocalRun,
  type RunLocallyOptions,
  runLocally,
} from '../testing/local/run-locally';

const ROOT = path.resolve(__dirname, '..');
const OUT_DIR = path.join(ROOT, '.local');
const ASSEMBLY_DIR = path.join(OUT_DIR, 'cdk.out');
/** The sample export is 200 MB deployed; locally 20 MB, so that the first command ends in seconds. */
const LOCAL_EXPORT_BYTES = '20000000';
const HELP_HINT = '(npm run local -- --help lists the options)';
/**
 * The sample's per-customer job takes its schedules at run time: the run upserts these two, as the app would for two
 * customers, and fires them with the fixed jobs (their occurrences carry the key and the input).
 */
export const SAMPLE_CUSTOMER_SCHEDULES: NonNullable<RunLocallyOptions['runtimeSchedules']> = [
  {
    jobId: 'customer-report',
    scheduleKey: 'customer-42',
    expression: 'cron(0 8 ? * MON *)',
    timeZone: 'Europe/Berlin',
    input: { customerName: 'Acme GmbH' },
  },
  {
    jobId: 'customer-report',
    scheduleKey: 'customer-77',
    expression: 'cron(0 9 ? * MON *)',
    timeZone: 'America/New_York',
    input: { customerName: 'Initech' },
  },
];

export class LocalUsageError extends Error {
  override readonly name = 'LocalUsageError';
}

export interface LocalOptions {
  readonly from?: string;
  readonly count: number;
  readonly jobs?: string[];
  readonly inTurn: boolean;
  readonly pollers: number;
  readonly timeout: number;
  readonly keep: boolean;
}

/** The options, or a LocalUsageError naming the one that is wrong; `--help` prints the usage and exits 0. */
export function parseLocalArgs(
  argv: readonly string[],
  write: (text: string) => void = (text) => process.stdout.write(text),
) {
  const whole =
    (name: string, max: number) =>
    (value: string): number => {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max)
        throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
      return Number(value);
    };
  const program = new Command('npm run local --')
    .description(
      "Synthesize the sample app, run its jobs on this machine against moto with runLocally, and print each occurrence with why it ended as it did. Exit 0 when every occurrence ended as its job's policies dictate, 1 when not, 2 for a bad option.",
    )
    .option('--from <time>', 'fire the occurrences due at or after this ISO date-time (default: now)', (value) => {
      const time = normaliseScheduledTime(value);
      if (!time.ok) throw new InvalidArgumentError(`--from ${time.error.replace(/^scheduledTime /, '')}`);
      return time.value;
    })
    .option('--count <n>', `occurrences per job, 1-${LOCAL_RUN_LIMITS.maxCount}`, whole('--count', 50), 3)
    .option('--jobs <ids>', 'comma-separated job ids (default: every scheduled job)', (value: string) =>
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .option(
      '--in-turn',
      "fire one time after the other, each when the last has settled (default: a job's occurrences at once, as Scheduler delivers a backlog, so that its overlap policy decides)",
      false,
    )
    .option('--pollers <n>', 'concurrent pollers per worker queue, 1-20', whole('--pollers', 20), 2)
    .option(
      '--timeout <seconds>',
      'give up waiting for the occurrences after this long, 1-3600',
      whole('--timeout', 3600),
      120,
    )
    .option(
      '--keep',
      'leave moto, the resources and the workers running, and print the occurrences CLI for them',
      false,
    )
    .configureOutput({ writeOut: write, writeErr: () => undefined })
    .exitOverride();
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return undefined; // --help
    if (error instanceof CommanderError) throw new LocalUsageError(error.message.replace(/^error: /, ''));
    throw error;
  }
  return program.opts<LocalOptions>();
}

/** `cdk synth` of bin/app.ts into .local/cdk.out, as a user's app is synthesized before runLocally reads it. */
async function synthesize(): Promise<number> {
  const started = performance.now();
  try {
    await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '-o', ASSEMBLY_DIR], {
      cwd: ROOT,
      env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new AssemblyError(ASSEMBLY_DIR, [`cdk synth failed:\n${stderr || stdout || String(error)}`]);
  }
  return performance.now() - started;
}

export function runOptions(options: LocalOptions, log: (line: string) => void): RunLocallyOptions {
  return {
    assemblyDir: ASSEMBLY_DIR,
    from: options.from,
    count: options.count,
    jobs: options.jobs,
    fire: options.inTurn ? 'in-turn' : 'at-once',
    redeliverLate: true,
    pollers: options.pollers,
    timeoutSeconds: options.timeout,
    keep: options.keep,
    environment: { 'ndjson-export': { SAMPLE_EXPORT_BYTES: LOCAL_EXPORT_BYTES } },
    // Only when the per-customer job is among the jobs fired.
    runtimeSchedules: SAMPLE_CUSTOMER_SCHEDULES.filter(
      (s) => options.jobs === undefined || options.jobs.includes(s.jobId),
    ),
    onLog: (line) => log(JSON.stringify(line)),
    onFire: (fire) =>
      console.log(
        `fired ${fire.jobId}${fire.scheduleKey === undefined ? '' : `/${fire.scheduleKey}`} ${fire.scheduledTime}: ${fire.outcome}`,
      ),
  };
}

async function main(argv: readonly string[]): Promise<number> {
  const options = parseLocalArgs(argv);
  if (options === undefined) return 0;
  rmSync(OUT_DIR, { recursive: true, force: true });
  mkdirSync(OUT_DIR, { recursive: true });

  step('synthesizing the sample app (bin/app.ts): npx cdk synth --quiet -o .local/cdk.out');
  console.log(`  done in ${((await synthesize()) / 1000).toFixed(1)} s`);
  const logFile = path.join(OUT_DIR, 'handlers.log');
  const log = createWriteStream(logFile);
  const fireWhat = options.inTurn ? 'one fire time after the other' : "each job's at once, as after an outage";
  step(
    `runLocally: moto, the template's tables, queues, bucket, topic and schedules, the bundled functions; firing ${options.count} occurrence(s) per job, ${fireWhat}, each delivered twice, then once more late`,
  );
  const run = await runLocally(runOptions(options, (line) => log.write(`${line}\n`)));
  log.end();
  console.log();
  console.log(formatLocalRun(run));
  console.log(lateLine(run));
  console.log(
    `reports: ${writeReports(run)}; the functions' log lines (JSON): ${path.relative(process.cwd(), logFile)}`,
  );
  if (options.keep) return waitForCtrlC(run as KeptLocalRun, 'npm run -s occurrences --', console.log);
  return run.ok ? 0 : 1;
}

/** What the late redeliveries did: the trigger must have recorded nothing new. */
function lateLine(run: LocalRun): string {
  const late = run.fires.filter((f) => f.late);
  if (late.length === 0) return 'late redeliveries: none (the run timed out first)';
  const counts = new Map<string, number>();
  for (const f of late) counts.set(f.outcome, (counts.get(f.outcome) ?? 0) + 1);
  return `late redeliveries: ${[...counts].map(([outcome, n]) => `${n} × ${outcome}`).join(', ')}`;
}

/** Copies of the committed reports under .local/reports/, as the bucket holds them. */
function writeReports(run: LocalRun): string {
  let written = 0;
  for (const row of run.rows) {
    if (row.reportKey === undefined || row.report === undefined) continue;
    const file = path.join(OUT_DIR, row.reportKey);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, row.report);
    written += 1;
  }
  const bucket = run.resources.bucketName ?? 'the report bucket';
  return written === 0 ? 'none committed' : `s3://${bucket}/reports/, ${written} copied to .local/reports/`;
}

function step(text: string): void {
  console.log(`▸ ${text}`);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      if (error instanceof LocalUsageError) {
        console.error(`error: ${error.message} ${HELP_HINT}`);
        process.exit(2);
      }
      if (error instanceof TypeError || error instanceof AssemblyError || error instanceof MotoUnavailableError) {
        console.error(`error: ${error.message}`);
        process.exit(1);
      }
      console.error(error);
      process.exit(1);
    },
  );
}
