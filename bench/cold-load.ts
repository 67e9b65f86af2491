/**
 * Figure 4 of the benchmarks: the cold load of each bundled handler, beside two anchors (bench/anchors/).
 *
 * Each handler is bundled with the stack's own esbuild options (JOB_FUNCTION_BUNDLING in lib/job-function.ts), then a
 * fresh `node` that only `require`s the bundle runs under valgrind's callgrind, which counts the instructions it
 * executes (Ir). Instruction counts, unlike wall time, hardly move on a shared machine. The empty module's count
 * (Node's own start-up) is subtracted, so a figure is what loading that handler adds. The handler is not invoked:
 * loading is module evaluation, including anything a module builds at its top level.
 *
 *   npm run bench:cold-load [-- --runs 1] [--jobs 2] [--handlers trigger,worker] [--breakdown]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { BuildOptions, Metafile } from 'esbuild';
import { withDefaults } from '../functions/protocol/job-settings';
import { ENV } from '../functions/runtime-env';
import { FUNCTION_RUNTIME, JOB_FUNCTION_BUNDLING } from '../lib/job-function';

const ROOT = resolve(__dirname, '..');

export type SubjectKind = 'handler' | 'anchor';

export interface Subject {
  readonly name: string;
  readonly kind: SubjectKind;
  readonly entry: string;
}

/** The bare anchor: every ratio is to it. */
export const BARE_ANCHOR = 'bare-trigger';

export const SUBJECTS: readonly Subject[] = [
  { name: 'trigger', kind: 'handler', entry: 'functions/trigger.ts' },
  { name: 'worker', kind: 'handler', entry: 'functions/worker.ts' },
  { name: 'notifier', kind: 'handler', entry: 'functions/notifier.ts' },
  { name: 'reconciler', kind: 'handler', entry: 'functions/reconciler.ts' },
  { name: BARE_ANCHOR, kind: 'anchor', entry: 'bench/anchors/bare-trigger.ts' },
  { name: 'idempotent-trigger', kind: 'anchor', entry: 'bench/anchors/idempotent-trigger.ts' },
];

export interface ColdLoadOptions {
  /** Callgrind runs per bundle; the median is kept. Default 3. */
  readonly runs?: number;
  /** Names from SUBJECTS to measure; the bare anchor and the empty module are always measured. Default: all. */
  readonly handlers?: readonly string[];
  /** Callgrind runs at once. Counts do not depend on it; default 1, as these machines are shared. */
  readonly jobs?: number;
  /** Progress lines. Default: none. */
  readonly log?: (line: string) => void;
}

export interface SubjectFigures {
  readonly name: string;
  readonly kind: SubjectKind;
  readonly bundleBytes: number;
  /** Total instructions of each run, in run order. */
  readonly runs: readonly number[];
  readonly medianInstructions: number;
  /** The median above the empty module's median. */
  readonly aboveEmpty: number;
  /** max - min of the runs, as a fraction of the median. */
  readonly spread: number;
  /** aboveEmpty over the bare anchor's aboveEmpty. */
  readonly ratioToBare: number;
  /** Bytes in the bundle by package (or by top folder of this project), largest first. */
  readonly breakdown: readonly PackageBytes[];
}

export interface PackageBytes {
  readonly source: string;
  readonly bytes: number;
}

export interface ColdLoadFigures {
  readonly node: string;
  readonly runsPerBundle: number;
  readonly empty: { readonly runs: readonly number[]; readonly medianInstructions: number; readonly spread: number };
  readonly subjects: readonly SubjectFigures[];
  readonly elapsedSeconds: number;
}

// ---- arithmetic (tested in test/bench/cold-load.test.ts) ----

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** max - min as a fraction of the median: how far apart repeated runs landed. */
export function relativeSpread(values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

export function aboveBaseline(runs: readonly number[], baselineRuns: readonly number[]): number {
  return median(runs) - median(baselineRuns);
}

export function ratio(value: number, anchor: number): number {
  if (anchor <= 0) throw new Error(`the anchor's figure is ${anchor}; a ratio to it means nothing`);
  return value / anchor;
}

/**
 * The total instructions from callgrind's output file: its `summary:` line (older callgrinds write `totals:` only).
 * With `--tool=callgrind` and the default event, the one number is Ir.
 */
export function parseCallgrindTotal(output: string): number {
  const line = /^summary:\s+(\d+)/m.exec(output) ?? /^totals:\s+(\d+)/m.exec(output);
  if (line === null) throw new Error('no summary: or totals: line in the callgrind output');
  return Number(line[1]);
}

// ---- bundling ----

type CdkBundling = typeof JOB_FUNCTION_BUNDLING;

/**
 * The esbuild options the CDK's NodejsFunction derives from the stack's bundling options (aws-lambda-nodejs
 * bundling.ts, buildEsbuildArgs): `--bundle --target=node<runtime> --platform=node`, no --format (so CommonJS),
 * `--minify`, `--sourcemap`, `--sources-content=false`, no externals with bundleAwsSDK, `--main-fields`, and the
 * `esbuildArgs` `--conditions` and `--alias:<package>`. An option this mapping does not know
 * fails here, so that a change to the stack's bundling cannot silently leave the benchmark behind.
 */
export function esbuildOptionsFor(bundling: CdkBundling, runtimeName: string): BuildOptions {
  const known = new Set([
    'minify',
    'sourceMap',
    'sourcesContent',
    'bundleAwsSDK',
    'mainFields',
    'forceDockerBundling',
    'esbuildArgs',
  ]);
  const unknown = Object.keys(bundling).filter((key) => !known.has(key));
  if (unknown.length > 0)
    throw new Error(`bench/cold-load.ts does not map the bundling option(s) ${unknown.join(', ')}`);
  if (!bundling.bundleAwsSDK) throw new Error('bench/cold-load.ts expects bundleAwsSDK (no externals)');
  const { '--conditions': conditions, ...otherArgs } = bundling.esbuildArgs as Record<string, string>;
  const alias = Object.fromEntries(
    Object.entries(otherArgs)
      .filter(([key]) => key.startsWith('--alias:'))
      .map(([key, value]) => [key.slice('--alias:'.length), value]),
  );
  const unmapped = Object.keys(otherArgs).filter((key) => !key.startsWith('--alias:'));
  if (unmapped.length > 0)
    throw new Error(`bench/cold-load.ts does not map the esbuild argument(s) ${unmapped.join(', ')}`);
  return {
    conditions: conditions.split(','),
    alias,
    bundle: true,
    platform: 'node',
    target: nodeTarget(runtimeName),
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    mainFields: bundling.mainFields,
    metafile: true,
    logLevel: 'silent',
  };
}

function nodeTarget(runtimeName: string): string {
  const match = /nodejs(\d+)/.exec(runtimeName);
  if (match === null) throw new Error(`cannot read a Node.js version from the runtime ${runtimeName}`);
  return `node${match[1]}`;
}

export interface Bundle {
  readonly file: string;
  readonly bytes: number;
  readonly breakdown: readonly PackageBytes[];
}

export async function bundle(entry: string, outDir: string): Promise<Bundle> {
  const { build } = await import('esbuild');
  const file = join(outDir, 'index.js');
  const result = await build({
    ...esbuildOptionsFor(JOB_FUNCTION_BUNDLING, FUNCTION_RUNTIME.name),
    // Metafile paths relative to the project, whatever the caller's working directory.
    absWorkingDir: ROOT,
    entryPoints: [relative(ROOT, entry)],
    outfile: file,
  });
  return { file, bytes: statSync(file).size, breakdown: bytesBySource(result.metafile as Metafile) };
}

/** Groups a bundle's bytes by npm package (`@scope/name`), or by the project folder for the project's own code. */
export function bytesBySource(metafile: Metafile): PackageBytes[] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const source = sourceOf(path);
      totals.set(source, (totals.get(source) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
}

export function sourceOf(path: string): string {
  const normalized = path.replaceAll('\\', '/');
  const modules = normalized.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const [first, second] = normalized.slice(modules + 'node_modules/'.length).split('/');
    return first.startsWith('@') ? `${first}/${second}` : first;
  }
  // The project's own code file by file under functions/ (the parts one might load lazily), by folder elsewhere.
  return normalized.startsWith('functions/') ? normalized.replace(/\.ts$/, '') : normalized.split('/')[0];
}

// ---- measuring ----

/**
 * The measured process's whole environment, fixed so that runs repeat: no inherited variables (they would change
 * what the SDK and Powertools read at start-up), the stack's NODE_OPTIONS, a region, dummy credentials and the
 * variables the handlers read, with deterministic values.
 */
export function measuredEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    // The stack sets it on every function (lib/job-function.ts): Node then reads the bundle's source map at load.
    NODE_OPTIONS: '--enable-source-maps',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDCOLDLOADBENCH000',
    AWS_SECRET_ACCESS_KEY: 'cold-load-bench-secret',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_LAMBDA_FUNCTION_NAME: 'cold-load-bench',
    [ENV.tableName]: 'occurrences',
    [ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/000000000000/jobs',
    [ENV.bucketName]: 'reports',
    [ENV.topicArn]: 'arn:aws:sns:us-east-1:000000000000:report-ready.fifo',
    [ENV.jobSettings]: JSON.stringify([withDefaults({ id: 'cold-load' })]),
    [ENV.reconcileThresholds]: JSON.stringify({
      stuckAfterSeconds: 900,
      unannouncedAfterSeconds: 900,
      lookbackSeconds: 86_400,
      maxFixesPerRun: 100,
    }),
    [ENV.metricsNamespace]: 'ScheduledJobs/ColdLoad',
    IDEMPOTENCY_TABLE_NAME: 'idempotency',
  };
}

/**
 * V8 flags that make the count repeat. By default V8 compiles, marks and sweeps on background threads, and how much
 * of that work happens before the process exits depends on timing: callgrind counts every thread, and an empty module
 * measured 93.4, 95.2 and 95.2 M instructions in three runs. In one thread, with fixed hash and random seeds, the
 * same three runs agree to within 600 instructions. The figures are therefore for a single-threaded V8; the work
 * per handler is the same, done in one thread instead of several.
 */
export const DETERMINISTIC_NODE_FLAGS = ['--single-threaded', '--hash-seed=1', '--random-seed=1'] as const;

/** One callgrind run of a fresh node that requires the file; the total instructions. */
export async function countInstructions(file: string, workDir: string): Promise<number> {
  const outFile = join(workDir, `callgrind.${process.hrtime.bigint()}.out`);
  const args = [
    '--tool=callgrind',
    `--callgrind-out-file=${outFile}`,
    process.execPath,
    ...DETERMINISTIC_NODE_FLAGS,
    '-e',
    'require(process.argv[1])',
    file,
  ];
  try {
    const { code, stderr } = await run('valgrind', args, measuredEnv());
    if (code !== 0) throw new Error(`valgrind exited with ${code} on ${file}:\n${stderr.slice(-2_000)}`);
    return parseCallgrindTotal(readFileSync(outFile, 'utf8'));
  } finally {
    rmSync(outFile, { force: true });
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-20_000);
    });
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code: code ?? 1, stderr }));
  });
}

/** Runs the tasks with at most `limit` at once, keeping their order in the results. */
async function inPool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return results;
}

/** The cold-load measurement runs under valgrind, and it is not installed. */
export class ValgrindMissingError extends Error {
  override readonly name = 'ValgrindMissingError';

  constructor() {
    super('valgrind is not installed (or not on the PATH); install it with: sudo apt-get install valgrind');
  }
}

async function requireValgrind(): Promise<void> {
  try {
    const { code } = await run('valgrind', ['--version'], { PATH: process.env.PATH });
    if (code !== 0) throw new ValgrindMissingError();
  } catch {
    throw new ValgrindMissingError();
  }
}

export function selectSubjects(names: readonly string[] | undefined): Subject[] {
  if (names === undefined) return [...SUBJECTS];
  const unknown = names.filter((name) => !SUBJECTS.some((s) => s.name === name));
  if (unknown.length > 0) {
    throw new Error(`unknown handler(s) ${unknown.join(', ')}; known: ${SUBJECTS.map((s) => s.name).join(', ')}`);
  }
  return SUBJECTS.filter((s) => s.name === BARE_ANCHOR || names.includes(s.name));
}

export async function measureColdLoad(options: ColdLoadOptions = {}): Promise<ColdLoadFigures> {
  const started = Date.now();
  const runs = options.runs ?? 3;
  const log = options.log ?? (() => {});
  await requireValgrind();
  const subjects = selectSubjects(options.handlers);
  const workDir = mkdtempSync(join(tmpdir(), 'cold-load-'));
  try {
    const emptyEntry = join(workDir, 'empty.ts');
    writeFileSync(emptyEntry, 'export {};\n');
    const emptyBundle = await bundle(emptyEntry, join(workDir, 'empty'));
    const bundles = await Promise.all(subjects.map((s) => bundle(join(ROOT, s.entry), join(workDir, s.name))));
    const files = [emptyBundle.file, ...bundles.map((b) => b.file)];
    const names = ['(empty module)', ...subjects.map((s) => s.name)];
    const tasks = files.flatMap((file, i) =>
      Array.from({ length: runs }, (_, r) => async () => {
        const count = await countInstructions(file, workDir);
        log(`  ${names[i]} run ${r + 1}/${runs}: ${(count / 1e6).toFixed(1)} M instructions`);
        return count;
      }),
    );
    const counts = await inPool(tasks, options.jobs ?? 1);
    const runsOf = (i: number) => counts.slice(i * runs, (i + 1) * runs);
    const emptyRuns = runsOf(0);
    const bareIndex = subjects.findIndex((s) => s.name === BARE_ANCHOR);
    const bareAbove = aboveBaseline(runsOf(bareIndex + 1), emptyRuns);
    return {
      node: process.version,
      runsPerBundle: runs,
      empty: { runs: emptyRuns, medianInstructions: median(emptyRuns), spread: relativeSpread(emptyRuns) },
      subjects: subjects.map((subject, i) => {
        const subjectRuns = runsOf(i + 1);
        const above = aboveBaseline(subjectRuns, emptyRuns);
        return {
          name: subject.name,
          kind: subject.kind,
          bundleBytes: bundles[i].bytes,
          runs: subjectRuns,
          medianInstructions: median(subjectRuns),
          aboveEmpty: above,
          spread: relativeSpread(subjectRuns),
          ratioToBare: ratio(above, bareAbove),
          breakdown: bundles[i].breakdown,
        };
      }),
      elapsedSeconds: (Date.now() - started) / 1000,
    };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

// ---- the command ----

const millions = (n: number) => (n / 1e6).toFixed(1);
const percent = (fraction: number) => `${(fraction * 100).toFixed(2)} %`;
const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export function formatTable(figures: ColdLoadFigures): string {
  const header = ['handler', 'bundle', 'M instr. above empty', 'spread', 'ratio to bare'];
  const rows = figures.subjects.map((s) => [
    s.kind === 'anchor' ? `${s.name} (anchor)` : s.name,
    kilobytes(s.bundleBytes),
    millions(s.aboveEmpty),
    percent(s.spread),
    s.ratioToBare.toFixed(2),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) =>
    cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])));
  return [line(header).join('  '), ...rows.map((r) => line(r).join('  '))].join('\n');
}

function formatBreakdown(subject: SubjectFigures, top = 12): string {
  const lines = subject.breakdown.slice(0, top).map((p) => `    ${kilobytes(p.bytes).padStart(9)}  ${p.source}`);
  return [`  ${subject.name}: ${kilobytes(subject.bundleBytes)}`, ...lines].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      handlers: { type: 'string' },
      jobs: { type: 'string', default: '1' },
      breakdown: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  const jobs = Number(values.jobs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number of at least 1`);
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs must be a whole number of at least 1`);
  const handlers = values.handlers?.split(',').map((name) => name.trim());
  // Measured: 21 runs (7 bundles x 3) took 417 s on this project's shared two-core machine, 15 to 25 s a run.
  console.log(
    `Cold load: callgrind, ${runs} run(s) per bundle, ${jobs} at once, median above an empty module. About 20 s a ` +
      'run, 7 minutes for the default 21; --runs 1, --jobs 2 and --handlers trigger,worker shorten it.',
  );
  const figures = await measureColdLoad({ runs, jobs, handlers, log: (line) => console.log(line) });
  console.log('');
  console.log(formatTable(figures));
  console.log('');
  console.log(
    `Empty module: ${millions(figures.empty.medianInstructions)} M instructions (spread ${percent(figures.empty.spread)}); ` +
      `node ${figures.node}; took ${figures.elapsedSeconds.toFixed(0)} s.`,
  );
  if (values.breakdown) {
    console.log('\nBundle bytes by source:');
    for (const subject of figures.subjects) console.log(formatBreakdown(subject));
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(error instanceof ValgrindMissingError ? 2 : 1);
  });
}
