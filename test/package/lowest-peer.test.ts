/**
 * The lowest aws-cdk-lib the package declares (the lower bound of package.json's peerDependencies) is one it works
 * with. A copy of the example app (examples/two-workers) gets the packed tarball with aws-cdk-lib and constructs at
 * exactly their lower bounds, type-checks strictly with the declarations checked too (skipLibCheck off: the
 * package's .d.ts against that aws-cdk-lib), and synthesizes with the cdk CLI, bundling every function. The
 * package's own lib/ sources are compiled against the same aws-cdk-lib as well: a prop the bound does not know is
 * dropped silently at synth, and only the compiler sees it. A use in lib/ of something newer than the bound fails
 * here until the bound is raised with it (the note on the bound is in docs/packaging.md, "Dependencies").
 *
 * Unlike pack-install's offline install (package-lock.json pins aws-cdk-lib at the newest, which the other tests run
 * on), this install resolves from the npm registry: `--prefer-offline` takes what npm's cache holds, which is every
 * package after the first run, and downloads the rest (aws-cdk-lib at the bound, about 31 MB, on a clean machine).
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, type PackedTarball, packTarball, REPO_ROOT, type RunResult, run, timed } from './pack-install';

const SLOW = 600_000;
const APP = join(tmpdir(), `scheduled-jobs-lowest-peer-${process.pid}`);
const EXAMPLE = join(REPO_ROOT, 'examples', 'two-workers');

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [field: string]: unknown;
}

interface Resource {
  readonly Type: string;
  // biome-ignore lint/suspicious/noExplicitAny: a CloudFormation template is untyped JSON.
  readonly Properties: any;
  readonly Metadata?: Record<string, unknown>;
}
type Resources = Record<string, Resource>;

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/**
 * The lowest version a peer range admits. The ranges are carets (`^2.252.0`: that version up to the next major);
 * anything else is refused rather than guessed at.
 */
function lowerBound(range: string): string {
  const caret = /^\^(\d+\.\d+\.\d+)$/.exec(range.trim());
  if (caret === null) throw new Error(`peer range ${range}: expected a caret range like ^2.252.0`);
  return caret[1];
}

const peers = readJson<Manifest>(join(REPO_ROOT, 'package.json')).peerDependencies ?? {};
const LOWEST = {
  'aws-cdk-lib': lowerBound(peers['aws-cdk-lib'] ?? ''),
  constructs: lowerBound(peers.constructs ?? ''),
};

let packDir: string;
let tarball: PackedTarball;

const installedVersion = (name: string) =>
  readJson<{ version: string }>(join(APP, 'node_modules', name, 'package.json')).version;
const tsc = (args: readonly string[]) => run(join(APP, 'node_modules', '.bin', 'tsc'), args, APP);
/**
 * A child's output for a failure message, each line quoted: vitest takes the `at ...` lines of a message for frames of
 * its own stack and source-maps them, and a child's stack (a failed synth) then ends the run with an unhandled error.
 */
const output = (result: RunResult) =>
  `${result.stdout}\n${result.stderr}`
    .trim()
    .split('\n')
    .map((line) => `| ${line}`)
    .join('\n');

/** The function a `Fn::GetAtt [id, 'Arn']` or `Ref` names, when it is a Lambda function of the same template. */
function functionNamedBy(resources: Resources, reference: unknown): string | undefined {
  const ref = reference as { 'Fn::GetAtt'?: [string, string]; Ref?: string } | undefined;
  const id = ref?.['Fn::GetAtt']?.[0] ?? ref?.Ref;
  if (id === undefined) return undefined;
  // A run-time-schedule job's schedules invoke the trigger through the job's own alias: the function it names.
  if (resources[id]?.Type === 'AWS::Lambda::Alias')
    return functionNamedBy(resources, resources[id].Properties.FunctionName);
  return resources[id]?.Type === 'AWS::Lambda::Function' ? id : undefined;
}

beforeAll(async () => {
  rmSync(APP, { recursive: true, force: true });
  cpSync(EXAMPLE, APP, { recursive: true, filter: (src) => !/node_modules|cdk\.out/.test(src) });
  packDir = mkdtempSync(join(tmpdir(), 'scheduled-jobs-stack-tgz-'));
  tarball = await timed('npm pack (prepack: npm run build)', () => packTarball(packDir));

  // The app as its team declares it, but with the package from the tarball and both peers at their lower bounds.
  const app = readJson<Manifest>(join(APP, 'package.json'));
  app.dependencies = {
    ...app.dependencies,
    [tarball.name]: `file:${tarball.path}`,
    'aws-cdk-lib': LOWEST['aws-cdk-lib'],
    constructs: LOWEST.constructs,
  };
  writeFileSync(join(APP, 'package.json'), `${JSON.stringify(app, null, 2)}\n`);
  const install = await timed(
    `npm install --prefer-offline (aws-cdk-lib ${LOWEST['aws-cdk-lib']}, constructs ${LOWEST.constructs})`,
    // Peer conflicts stay errors (no --legacy-peer-deps): a constructs bound below what aws-cdk-lib at its own bound
    // asks for fails here with ERESOLVE.
    () => run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], APP),
  );
  if (install.code !== 0) throw new Error(`npm install failed:\n${output(install)}`);
}, SLOW);

afterAll(() => {
  rmSync(APP, { recursive: true, force: true });
  if (packDir !== undefined) rmSync(packDir, { recursive: true, force: true });
});

describe(`the lowest peers package.json declares (aws-cdk-lib ${LOWEST['aws-cdk-lib']}, constructs ${LOWEST.constructs})`, () => {
  it('are what the app got: npm resolved them beside the package without a peer conflict', () => {
    expect(installedVersion('aws-cdk-lib')).toBe(LOWEST['aws-cdk-lib']);
    expect(installedVersion('constructs')).toBe(LOWEST.constructs);
    // One copy of each: the package uses the app's, not a newer one of its own.
    expect(existsSync(join(APP, 'node_modules', tarball.name, 'node_modules', 'aws-cdk-lib'))).toBe(false);
  });

  it(
    "type-check the example app strictly, the package's declarations included",
    async () => {
      writeFileSync(
        join(APP, 'tsconfig.lowest-peer.json'),
        JSON.stringify({
          extends: './tsconfig.json',
          compilerOptions: { strict: true, noEmit: true, skipLibCheck: false },
        }),
      );
      const result = await timed('tsc --noEmit of the example app (strict, skipLibCheck off)', () =>
        tsc(['-p', 'tsconfig.lowest-peer.json']),
      );
      expect(result.code, output(result)).toBe(0);
    },
    SLOW,
  );

  it(
    "compile the package's own lib/ sources: no member or prop newer than the bound",
    async () => {
      // The repository's compiler settings, with aws-cdk-lib and constructs taken from the app: every other import
      // of lib/ and functions/ resolves in the repository as usual.
      const from = (name: string) => join(APP, 'node_modules', name);
      writeFileSync(
        join(APP, 'tsconfig.package-sources.json'),
        JSON.stringify({
          extends: join(REPO_ROOT, 'tsconfig.json'),
          compilerOptions: {
            noEmit: true,
            types: ['node'],
            typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
            paths: {
              'aws-cdk-lib': [from('aws-cdk-lib')],
              'aws-cdk-lib/*': [join(from('aws-cdk-lib'), '*')],
              constructs: [from('constructs')],
            },
          },
          include: [join(REPO_ROOT, 'lib', '**', '*.ts')],
        }),
      );
      const result = await timed(`tsc --noEmit of lib/ against aws-cdk-lib ${LOWEST['aws-cdk-lib']}`, () =>
        tsc(['-p', 'tsconfig.package-sources.json', '--listFiles']),
      );
      const files = result.stdout.split('\n');
      // Without the listed files (absolute paths); the errors name theirs relative to the app.
      expect(result.code, output(result).replace(/^\| \/.*\n/gm, '')).toBe(0);
      // The compile read the app's aws-cdk-lib, not the repository's newer one.
      expect(files.some((file) => file.startsWith(join(from('aws-cdk-lib'), 'aws-scheduler')))).toBe(true);
      expect(files.filter((file) => file.startsWith(join(REPO_ROOT, 'node_modules', 'aws-cdk-lib')))).toEqual([]);
    },
    SLOW,
  );

  it(
    'synthesize the example app with cdk synth: a schedule per job invoking a function, SQS-fed workers, all bundled',
    async () => {
      const outDir = join(APP, 'cdk.out');
      const env = cleanEnv({ CDK_DISABLE_VERSION_CHECK: '1' });
      // Bundling on, whatever the calling tier says: the bundling options are part of what the bound must support.
      delete env.CDK_CONTEXT_JSON;
      const synth = await timed('cdk synth of the example app', () =>
        run(join(APP, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', outDir], APP, env),
      );
      expect(synth.code, output(synth)).toBe(0);

      // The app was constructed by aws-cdk-lib at the bound (tree.json records each construct's library version).
      const tree = readJson<{ tree: { constructInfo?: { version?: string } } }>(join(outDir, 'tree.json'));
      expect(tree.tree.constructInfo?.version).toBe(LOWEST['aws-cdk-lib']);

      const templates = readdirSync(outDir)
        .filter((file) => file.endsWith('.template.json'))
        .map((file) => readJson<{ Resources?: Resources }>(join(outDir, file)).Resources ?? {});
      const resources = templates.find((r) =>
        Object.values(r).some((resource) => resource.Type === 'AWS::Scheduler::Schedule'),
      );
      expect(resources, 'a template with an AWS::Scheduler::Schedule').toBeDefined();
      const all = Object.entries(resources as Resources);

      const scheduleTargets = all
        .filter(([, r]) => r.Type === 'AWS::Scheduler::Schedule')
        .map(([, r]) => functionNamedBy(resources as Resources, r.Properties.Target?.Arn));
      expect(scheduleTargets.length).toBeGreaterThan(0);
      expect(scheduleTargets, 'every schedule invokes a function of the stack').not.toContain(undefined);

      const queues = new Set(all.filter(([, r]) => r.Type === 'AWS::SQS::Queue').map(([id]) => id));
      const workers = all
        .filter(([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping')
        .filter(([, r]) => queues.has(r.Properties.EventSourceArn?.['Fn::GetAtt']?.[0]))
        .map(([, r]) => functionNamedBy(resources as Resources, r.Properties.FunctionName));
      expect(workers.length, 'worker functions fed by a job queue').toBeGreaterThan(0);
      expect(workers).not.toContain(undefined);

      // The trigger and every worker were bundled by esbuild with the stack's options, as this aws-cdk-lib reads them.
      for (const id of new Set([...scheduleTargets, ...workers]) as Set<string>) {
        const asset = (resources as Resources)[id].Metadata?.['aws:asset:path'];
        expect(typeof asset, `${id} has a code asset`).toBe('string');
        expect(existsSync(join(outDir, asset as string, 'index.js')), `${id}'s bundle`).toBe(true);
      }
    },
    SLOW,
  );
});
