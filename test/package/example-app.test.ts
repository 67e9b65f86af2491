/**
 * The example app (examples/two-workers) as a team would have it: a copy of it gets this repository's packed tarball
 * installed, offline, then `cdk synth` runs in it. The template must have the two workers sized as the app says, each
 * queue's visibility timeout derived from its own worker, and the data bucket readable by the exports worker's role
 * alone. Then the app's own unit test runs (testJob from the package), and its jobs run on moto to SUCCEEDED from the
 * synthesized bundles (runLocally from the package), its per-customer job with one customer's schedule created through
 * the package's upsertSchedule. The slowest test of the suite: its steps print their times.
 */
import { cpSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Installed, packAndInstall, REPO_ROOT, run, timed } from './pack-install';

const SLOW = 600_000;
const APP = join(tmpdir(), `scheduled-jobs-example-${process.pid}`);
const EXAMPLE = join(REPO_ROOT, 'examples', 'two-workers');
const STACK = 'TwoWorkersExample';

interface Resource {
  readonly Type: string;
  // biome-ignore lint/suspicious/noExplicitAny: a CloudFormation template is untyped JSON.
  readonly Properties: any;
  readonly Metadata?: Record<string, unknown>;
}

let installed: Installed;
let resources: Record<string, Resource>;
let outDir: string;

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
/** The logical id of the one resource whose CDK path ends as `suffix` matches. */
function byPath(suffix: RegExp): string {
  const found = Object.entries(resources).filter(([, r]) => suffix.test(String(r.Metadata?.['aws:cdk:path'] ?? '')));
  if (found.length !== 1) throw new Error(`${found.length} resources at …${suffix.source}`);
  return found[0][0];
}
// A worker of addWorker is at Workers/<id>; a job's own worker (its entry) under the job, at Workers/<job>/Default.
const workerPart = (worker: string, part: string) => new RegExp(`/Workers/${worker}(/Default)?/${part}/Resource$`);
const functionOf = (worker: string) => resources[byPath(workerPart(worker, 'Function'))].Properties;
const queueOf = (worker: string) => resources[byPath(workerPart(worker, 'Queue'))].Properties;

beforeAll(async () => {
  rmSync(APP, { recursive: true, force: true });
  cpSync(EXAMPLE, APP, { recursive: true, filter: (src) => !/node_modules|cdk\.out/.test(src) });
  installed = await packAndInstall(APP, ['aws-cdk', 'tsx', '@types/node', 'vitest', 'vite']);
  outDir = join(APP, 'cdk.out');
  const synth = await timed('cdk synth of the example app (five functions bundled)', () =>
    run(join(APP, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', outDir], APP, {
      ...process.env,
      CDK_DISABLE_VERSION_CHECK: '1',
    }),
  );
  if (synth.code !== 0) throw new Error(`cdk synth failed:\n${synth.stderr}\n${synth.stdout}`);
  resources = JSON.parse(readFileSync(join(outDir, `${STACK}.template.json`), 'utf8')).Resources;
}, SLOW);

afterAll(() => {
  rmSync(APP, { recursive: true, force: true });
  if (installed !== undefined) rmSync(dirname(installed.tarball.path), { recursive: true, force: true });
});

describe('the example app, installed from the tarball and synthesized', () => {
  it('sizes the two workers as the app says: 2048 MB for 10 minutes, and a default 256 MB for its job plus 30 s', () => {
    expect(functionOf('exports')).toMatchObject({ MemorySize: 2048, Timeout: 600 });
    expect(functionOf('daily-digest')).toMatchObject({ MemorySize: 256, Timeout: 40 });
  });

  it("derives each queue's visibility timeout from its own worker, not from the longest of all", () => {
    // Six times the function timeout (functions/protocol/worker-limits.ts).
    expect(queueOf('exports').VisibilityTimeout).toBe(3_600);
    expect(queueOf('daily-digest').VisibilityTimeout).toBe(240);
    expect(queueOf('exports').RedrivePolicy.deadLetterTargetArn).not.toEqual(
      queueOf('daily-digest').RedrivePolicy.deadLetterTargetArn,
    );
  });

  it("lets the exports worker's role read the data bucket, and no other role", () => {
    const bucket = byPath(/\/DataBucket\/Resource$/);
    const readers = ofType('AWS::IAM::Policy')
      .filter(([, p]) => JSON.stringify(p.Properties.PolicyDocument).includes(`"${bucket}"`))
      .flatMap(([, p]) => p.Properties.Roles.map((r: { Ref: string }) => r.Ref));
    expect(readers).toEqual([byPath(/\/Workers\/exports\/FunctionRole\/Resource$/)]);
  });

  it('bundles the package from its TypeScript sources: each asset about as small as in this repository', () => {
    const sizes = readdirSync(outDir)
      .filter((d) => d.startsWith('asset.'))
      .map((d) => statSync(join(outDir, d, 'index.js')).size);
    console.log(`[package] example app bundles: ${sizes.map((s) => `${Math.round(s / 1024)} KB`).join(', ')}`);
    // The trigger, notifier and reconciler, the exports worker, and the digest's and the customer report's own.
    expect(sizes).toHaveLength(6);
    // From the compiled CommonJS they are 1.3 MB each (docs/packaging.md); from the sources 400-620 KB.
    for (const size of sizes) expect(size).toBeLessThan(800_000);
  });
});

/** The app's `npm run local` script, run once for the tests that read what it printed. */
let ranLocally: ReturnType<typeof run> | undefined;
function localRun(): ReturnType<typeof run> {
  ranLocally ??= timed("the example app's jobs on moto (runLocally, 2 occurrences each, a customer's schedule)", () =>
    run(join(APP, 'node_modules', '.bin', 'tsx'), ['scripts/run-local.ts'], APP),
  );
  return ranLocally;
}

describe('the example app, run as its team would', () => {
  it(
    "passes its own unit test, written with the package's testJob",
    async () => {
      const result = await timed("the example app's vitest run", () =>
        run(join(APP, 'node_modules', '.bin', 'vitest'), ['run'], APP),
      );
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(/1 passed/);
    },
    SLOW,
  );

  it(
    "runs the per-customer job's schedule, created at run time, with its key and input, to a report under its key",
    async () => {
      const result = await localRun();
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(/^worker customer-report: [1-9]\d* invocation\(s\)/m);
      const reports = result.stdout.split('\n').filter((line) => line.startsWith('report '));
      expect(reports.length).toBeGreaterThan(0);
      for (const line of reports) {
        expect(line).toMatch(/^report reports\/customer-report\/customer-42\/\S+\.txt: Weekly report for Acme GmbH/);
      }
    },
    SLOW,
  );

  it(
    'runs both jobs on moto to SUCCEEDED, each on its own worker, from the synthesized bundles',
    async () => {
      const result = await localRun();
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      const rows = result.stdout.split('\n').filter((line) => /SUCCEEDED/.test(line));
      expect(rows.filter((line) => /weekly-export .*SUCCEEDED/.test(line))).toHaveLength(2);
      expect(rows.filter((line) => /daily-digest .*SUCCEEDED/.test(line))).toHaveLength(2);
      // Each job on its own worker: both workers were invoked.
      expect(result.stdout).toMatch(/^worker exports: [1-9]\d* invocation\(s\)/m);
      expect(result.stdout).toMatch(/^worker daily-digest: [1-9]\d* invocation\(s\)/m);
      expect(result.stdout).toMatch(/\d+ occurrence\(s\) ended as their jobs' policies dictate/);
    },
    SLOW,
  );
});
