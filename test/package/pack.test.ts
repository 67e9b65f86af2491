/**
 * The package as a user gets it: `npm pack` of this checkout (prepack builds dist/), installed offline into an empty
 * app with its peer dependencies, then loaded from there by Node and TypeScript as the app would. Everything runs in
 * child processes whose working directory is the app, outside this repository, so nothing resolves from the
 * repository's own node_modules. Each step prints how long it took (docs/packaging.md quotes them).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokenLinks, linkTargets } from '../docs/markdown-links';
import {
  cleanEnv,
  type Installed,
  mapsNamingMissingSources,
  missingFiles,
  packAndInstall,
  REPO_ROOT,
  type RunResult,
  run,
  scriptsNamingMissingFiles,
  timed,
  unwantedFiles,
} from './pack-install';

const SLOW = 300_000;

/**
 * What each entry point in package.json "exports" gives at run time (the values; the types are in the API reports
 * under api/). A name added or removed here is a change of the public API: update the list and the API report
 * together (`npm run api`).
 */
/** The values the construct library exports (`.` and `./cdk`); types are in api/cdk.api.md. */
const CDK_EXPORTS = [
  'JobWorker',
  'MetricName',
  'JobsMonitoring',
  'OverlapPolicy',
  'ScheduledJob',
  'ScheduledJobs',
  'ScheduledJobsError',
  'ValidationError',
];

const EXPECTED_EXPORTS: Readonly<Record<string, readonly string[]>> = {
  '.': CDK_EXPORTS,
  './cdk': CDK_EXPORTS,
  './runtime': [
    'CheckpointRejectedError',
    'JobTimeoutError',
    'LeaseLostError',
    'OccurrenceStatus',
    'ScheduledJobsError',
    'SkipReason',
    'YieldRequestedError',
    'defineJob',
    'defineWorker',
  ],
  './operations': [
    'BACKFILL_CONCURRENCY',
    'BACKFILL_POLL_MS',
    'BULK_STATUSES',
    'DEFAULT_BULK_MAX',
    'DEFAULT_BULK_OCCURRENCE_RATE',
    'TooManyOccurrencesError',
    'bulkCancel',
    'bulkRetry',
    'checkBulkFilter',
    'newBulkId',
    'operatorName',
    'resolveOperatorIdentity',
    'selectOccurrences',
    'stsCallerArn',
    'DynamoJobStateStore',
    'InvalidScheduleError',
    'JobNotFoundError',
    'OperatorOccurrenceReader',
    'OperatorOccurrenceStore',
    'ReopenedNotEnqueuedError',
    'ScheduleNotFoundError',
    'ScheduleOperations',
    'SchedulerJobCatalogue',
    'SchedulerScheduleSwitch',
    'SqsWorkQueue',
    'UnknownScheduleJobError',
    'backfillRangeProblem',
    'cancelOccurrence',
    'connectJobOperations',
    'connectScheduleOperations',
    'deleteSchedule',
    'describeJob',
    'getSchedule',
    'listSchedules',
    'pauseJob',
    'pauseSchedule',
    'planBackfill',
    'previewBackfill',
    'recordBackfill',
    'resumeJob',
    'resumeSchedule',
    'retryOccurrence',
    'runJobNow',
    'upsertSchedule',
    'upsertSchedules',
  ],
  './testing': [
    'AssemblyError',
    'JobDidNotStopError',
    'MotoUnavailableError',
    'TestingError',
    'WorkerJobsError',
    'checkWorkerJobs',
    'fakeOccurrence',
    'recordingLogger',
    'formatLocalRun',
    'runLocally',
    'testJob',
  ],
};
const APP = join(tmpdir(), `scheduled-jobs-stack-consumer-${process.pid}`);

let installed: Installed;

function node(script: string): Promise<RunResult> {
  return run(process.execPath, ['-e', script], APP);
}

function filesUnder(folder: string, pattern: RegExp): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => pattern.test(file))
    .map((file) => join(folder, file))
    .sort();
}

/** The package a bare specifier names: `@aws-sdk/client-s3` for `@aws-sdk/client-s3/dist`, `zod` for `zod/mini`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

beforeAll(async () => {
  rmSync(APP, { recursive: true, force: true });
  // @types/node: what any TypeScript app on Node has, and what the declarations' NodeJS types need.
  installed = await packAndInstall(APP, ['@types/node']);
  console.log(
    `[package] tarball ${installed.tarball.size} bytes, unpacked ${installed.tarball.unpackedSize} bytes, ` +
      `${installed.tarball.files.length} files`,
  );
}, SLOW);

afterAll(() => {
  rmSync(APP, { recursive: true, force: true });
  if (installed !== undefined) rmSync(dirname(installed.tarball.path), { recursive: true, force: true });
});

describe('Package: the tarball', () => {
  it('holds the entry points, their declarations, the four handlers and the compiled CLI', () => {
    expect(missingFiles(installed.tarball.files)).toEqual([]);
  });

  it('holds no tests, simulation, scripts, benchmarks, examples, sample or TypeScript sources (declarations aside)', () => {
    console.log(`[package] the tarball's files:\n  ${installed.tarball.files.join('\n  ')}`);
    expect(unwantedFiles(installed.tarball.files)).toEqual([]);
  });

  it('fails the check when a required file is left out, or scripts, the simulation, the bench or the sample get in', () => {
    const withoutWorker = installed.tarball.files.filter((file) => file !== 'dist/functions/worker.js');
    const leaked = [
      'test/package/pack.test.ts',
      'lib/index.ts',
      'dist/scripts/local/pipeline.js',
      'dist/sim/world.js',
      'dist/bench/run.js',
      'dist/examples/sample-app/jobs/digest-job.js',
      'dist/lib/sample-stack.js',
      'functions/jobs/digest-worker.ts',
      'dist/functions/jobs/ndjson-export.js',
    ];

    expect(missingFiles(withoutWorker)).toEqual(['dist/functions/worker.js']);
    expect(unwantedFiles([...installed.tarball.files, ...leaked])).toEqual(leaked);
  });

  it('holds no source map that names a file the tarball lacks, so no stack trace points into one', () => {
    const read = (file: string) => readFileSync(join(installed.packageDir, file), 'utf8');

    expect(mapsNamingMissingSources(installed.tarball.files, read)).toEqual([]);
  });

  it('finds a map whose sources the tarball lacks, as dist had before (maps into lib/*.ts)', () => {
    const maps: Record<string, string> = {
      'dist/lib/job-config.js.map': JSON.stringify({ sources: ['../../lib/job-config.ts'] }),
      'dist/functions/worker.js.map': JSON.stringify({ sources: ['../../functions/worker.ts'] }),
    };
    const files = [...Object.keys(maps), 'dist/lib/job-config.js', 'functions/worker.ts'];

    expect(mapsNamingMissingSources(files, (file) => maps[file])).toEqual([
      'dist/lib/job-config.js.map: lib/job-config.ts',
    ]);
  });
});

describe('Package: its package.json and pages, as published', () => {
  const published = () => JSON.parse(readFileSync(join(installed.packageDir, 'package.json'), 'utf8'));

  it('is version 1.0.0 in a tarball named after it', () => {
    expect(published().version).toBe('1.0.0');
    expect(basename(installed.tarball.path)).toBe('scheduled-jobs-stack-1.0.0.tgz');
  });

  it('carries no script that names a file the tarball lacks; the repository keeps its own scripts', () => {
    expect(scriptsNamingMissingFiles(published().scripts, installed.tarball.files)).toEqual([]);
    // postpack put the repository's package.json back.
    const own = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(own.scripts.local).toBe('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true tsx scripts/local.ts');
    expect(scriptsNamingMissingFiles(own.scripts, installed.tarball.files)).toContain('local: scripts/local.ts');
  });

  it('finds the scripts that would need unshipped files', () => {
    const scripts = {
      bench: 'CDK_DISABLE_VERSION_CHECK=1 tsx bench/run.ts',
      occurrences: 'tsx bin/occurrences.ts',
      lint: 'biome check .',
      cached: 'tsc --tsBuildInfoFile node_modules/.cache/x.tsbuildinfo',
      shipped: 'node bin/occurrences/bin.cjs --help',
      docs: 'cat docs/',
    };

    expect(scriptsNamingMissingFiles(scripts, installed.tarball.files)).toEqual([
      'bench: bench/run.ts',
      'occurrences: bin/occurrences.ts',
    ]);
  });

  it('ships only pages whose every link leads into the tarball (file and heading) or is an absolute URL', () => {
    const pages = installed.tarball.files.filter((file) => file.endsWith('.md'));
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'SECURITY.md', 'docs/cli.md']));
    const broken = pages.flatMap((page) => brokenLinks(installed.packageDir, page).map((link) => `${page}: ${link}`));

    expect(broken).toEqual([]);
    // Packed without a repository URL (the release workflow sets one), the README's link to the example app went.
    const readme = readFileSync(join(installed.packageDir, 'README.md'), 'utf8');
    expect(linkTargets(readme).filter((target) => target.includes('examples/'))).toEqual([]);
    // The repository's README is as it was.
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toMatch(/\]\(examples\/two-workers\)/);
  });
});

describe('Package: installed in an app', () => {
  it(
    'loads every entry point of its "exports" from its compiled JavaScript, each with exactly the expected names',
    async () => {
      const manifest = JSON.parse(readFileSync(join(installed.packageDir, 'package.json'), 'utf8'));
      const entries = Object.keys(manifest.exports).filter((entry) => entry !== './package.json');
      const result = await timed(`require the ${entries.length} entry points`, () =>
        node(`
          const name = 'scheduled-jobs-stack';
          const out = {};
          for (const entry of ${JSON.stringify(entries)}) {
            const specifier = name + entry.slice(1);
            out[entry] = { file: require.resolve(specifier), exports: Object.keys(require(specifier)).sort() };
          }
          out.version = require(name + '/package.json').version;
          console.log(JSON.stringify(out));
        `),
      );
      expect(result.code, result.stderr).toBe(0);
      const loaded = JSON.parse(result.stdout);
      const inPackage = (file: string) => relative(installed.packageDir, file);

      expect(entries.sort()).toEqual(Object.keys(EXPECTED_EXPORTS).sort());
      for (const entry of entries) {
        expect(loaded[entry].exports, `the names ${entry} exports`).toEqual([...EXPECTED_EXPORTS[entry]].sort());
        console.log(`[package] ${entry}: ${loaded[entry].exports.length} exported values`);
      }
      expect(inPackage(loaded['.'].file)).toBe(join('dist', 'lib', 'index.js'));
      expect(inPackage(loaded['./cdk'].file)).toBe(join('dist', 'lib', 'index.js'));
      expect(inPackage(loaded['./runtime'].file)).toBe(join('dist', 'functions', 'index.js'));
      expect(inPackage(loaded['./operations'].file)).toBe(join('dist', 'operations', 'index.js'));
      expect(inPackage(loaded['./testing'].file)).toBe(join('dist', 'testing', 'index.js'));
      expect(loaded.version).toBe(installed.tarball.version);
    },
    SLOW,
  );

  it(
    'refuses a deep import past the exports map',
    async () => {
      const result = await node(`require('scheduled-jobs-stack/dist/lib/job-config')`);

      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
    },
    SLOW,
  );

  it(
    'loads every compiled module, so no dependency is missing, and finds the handlers for NodejsFunction',
    async () => {
      // dist/bin/occurrences.js runs the CLI when loaded; the bin test below runs it.
      const modules = filesUnder(join(installed.packageDir, 'dist'), /\.js$/).filter(
        (file) => !file.endsWith(join('dist', 'bin', 'occurrences.js')),
      );
      const result = await timed(`require ${modules.length} compiled modules`, () =>
        node(`
          const failed = [];
          for (const file of ${JSON.stringify(modules)}) {
            try { require(file); } catch (error) { failed.push(file + ': ' + error.message.split('\\n')[0]); }
          }
          const { handlerEntry } = require(${JSON.stringify(join(installed.packageDir, 'dist', 'lib', 'handler-entry.js'))});
          const entries = ['trigger', 'worker', 'notifier', 'reconciler'].map(handlerEntry);
          console.log(JSON.stringify({ failed, entries }));
        `),
      );
      expect(result.code, result.stderr).toBe(0);
      const { failed, entries } = JSON.parse(result.stdout);

      expect(failed).toEqual([]);
      expect(entries.map((entry: string) => relative(installed.packageDir, entry))).toEqual(
        // The TypeScript sources, which esbuild tree-shakes (lib/handler-entry.ts); the compiled files are the fallback.
        ['trigger', 'worker', 'notifier', 'reconciler'].map((name) => join('functions', `${name}.ts`)),
      );
    },
    SLOW,
  );

  it('imports only packages its package.json declares (a hoisted transitive one would break elsewhere)', () => {
    const manifest = JSON.parse(readFileSync(join(installed.packageDir, 'package.json'), 'utf8'));
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)]);
    const builtins = new Set(builtinModules);
    const undeclared = new Set<string>();
    for (const file of filesUnder(join(installed.packageDir, 'dist'), /\.(js|d\.ts)$/)) {
      const source = readFileSync(file, 'utf8');
      const specifiers = [
        ...source.matchAll(/\brequire\("([^"]+)"\)/g),
        ...source.matchAll(/\b(?:from\s+|import\(\s*)['"]([^'"]+)['"]/g),
      ].map((match) => match[1]);
      for (const specifier of specifiers) {
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = packageName(specifier);
        // The package's own name: an @example in its TSDoc imports it as a user would.
        if (name === manifest.name) continue;
        const types = `@types/${name.replace(/^@(.*)\//, '$1__')}`;
        if (!declared.has(name) && !(file.endsWith('.d.ts') && declared.has(types))) {
          undeclared.add(`${relative(installed.packageDir, file)}: ${specifier}`);
        }
      }
    }

    expect([...undeclared]).toEqual([]);
  });

  it(
    'runs the occurrences bin from the compiled CLI, without tsx: --help exits 0',
    async () => {
      const result = await timed('occurrences --help', () =>
        run(join(APP, 'node_modules', '.bin', 'occurrences'), ['--help'], APP),
      );

      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Usage: occurrences /);
      expect(result.stdout).toContain('backfill');
      const tsx = await node(`require.resolve('tsx/cjs/api', { paths: [${JSON.stringify(installed.packageDir)}] })`);
      expect(tsx.code, 'tsx is a dev dependency: it must not be in the app').not.toBe(0);
    },
    SLOW,
  );

  it(
    "runs a command that builds AWS SDK clients without the SDK's NodeVersionSupportWarning",
    async () => {
      // No credentials and no instance metadata: the command fails at once, after its clients were built.
      const env = Object.fromEntries(Object.entries(cleanEnv()).filter(([key]) => !key.startsWith('AWS_')));
      const result = await run(
        join(APP, 'node_modules', '.bin', 'occurrences'),
        ['--region', 'us-east-1', '--stack', 'NoSuchStack', 'list'],
        APP,
        {
          ...env,
          AWS_EC2_METADATA_DISABLED: 'true',
          AWS_SHARED_CREDENTIALS_FILE: join(APP, 'no-credentials'),
          AWS_CONFIG_FILE: join(APP, 'no-config'),
        },
      );

      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('NoSuchStack');
      expect(result.stderr).not.toContain('NodeVersionSupportWarning');
    },
    SLOW,
  );

  it(
    "bundles the console's page from the installed package: its source and every library it imports are there",
    async () => {
      const bundler = join(installed.packageDir, 'dist', 'console', 'server', 'page-bundle.js');
      const result = await node(`
        require(${JSON.stringify(bundler)}).bundlePage().then(
          (page) => console.log(JSON.stringify({ script: page.script.length, style: page.style.length })),
          (error) => { console.error(error.message); process.exit(1); },
        );
      `);

      expect(result.code, result.stderr).toBe(0);
      const sizes = JSON.parse(result.stdout);
      console.log(`[package] the console's page: script ${sizes.script} B, style ${sizes.style} B`);
      // Preact and d3-scale alone are more than 30 KB minified; an empty or half bundle is far smaller.
      expect(sizes.script).toBeGreaterThan(30_000);
      expect(sizes.style).toBeGreaterThan(1_000);
    },
    SLOW,
  );

  it(
    'brings the esbuild that NodejsFunction bundles the handlers with, and it runs',
    async () => {
      const result = await node(`
        const esbuild = require(require.resolve('esbuild', { paths: [require.resolve('aws-cdk-lib/package.json')] }));
        console.log(esbuild.version, esbuild.transformSync('let a: number = 1', { loader: 'ts' }).code.trim());
      `);

      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe('0.28.2 let a = 1;');
    },
    SLOW,
  );

  it(
    'has declarations that type-check in a TypeScript app (NodeNext resolution, strict, no skipLibCheck)',
    async () => {
      const declarations = filesUnder(join(installed.packageDir, 'dist'), /\.d\.ts$/);
      const appFile = join(APP, 'app.ts');
      const problems = await timed(`type-check ${declarations.length} declaration files`, async () => {
        const options: ts.CompilerOptions = {
          module: ts.ModuleKind.NodeNext,
          moduleResolution: ts.ModuleResolutionKind.NodeNext,
          target: ts.ScriptTarget.ES2022,
          lib: ['lib.es2022.d.ts'],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(APP, 'node_modules', '@types')],
        };
        const host = ts.createCompilerHost(options);
        const app = [
          "import * as cdk from 'scheduled-jobs-stack/cdk';",
          "import * as root from 'scheduled-jobs-stack';",
          "import * as operations from 'scheduled-jobs-stack/operations';",
          "import * as runtime from 'scheduled-jobs-stack/runtime';",
          "import * as testing from 'scheduled-jobs-stack/testing';",
          'export const entries = [cdk, root, operations, runtime, testing];',
          // Every operator action, called with nothing but what ./operations exports.
          'export async function operate(): Promise<void> {',
          "  const ops = operations.connectJobOperations({ tableName: 't', scheduleGroupName: 'g', workerQueueUrls: { w: 'https://q' } });",
          "  await operations.pauseJob(ops, 'j', { note: 'maintenance', by: 'alice' });",
          "  const job = await ops.job('j');",
          "  await operations.resumeJob(ops, job, { by: 'alice' });",
          "  await operations.runJobNow(ops, job, { by: 'alice' });",
          '  await operations.describeJob(ops, job);',
          "  const key = { jobId: 'j', scheduledTime: '2026-01-01T00:00:00Z' };",
          '  await operations.retryOccurrence(ops.retryDeps(job), key, { force: false });',
          '}',
          // A stack as the README writes it, on the published types only.
          "import { App, Duration, Stack, TimeZone } from 'aws-cdk-lib';",
          "import { ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';",
          'export function stack(): void {',
          '  const app = new App();',
          "  const jobs = new cdk.ScheduledJobs(new Stack(app, 'S'), 'Jobs', { alarms: { emailAddresses: ['ops@example.com'] } });",
          "  const exportsWorker = jobs.addWorker('exports', { entry: 'src/workers/exports.ts', memorySize: 2048, timeout: Duration.minutes(15) });",
          "  const weekly = jobs.addJob('weekly-export', {",
          "    schedule: ScheduleExpression.cron({ minute: '0', hour: '3', weekDay: 'MON', timeZone: TimeZone.EUROPE_BERLIN }),",
          '    worker: exportsWorker, timeout: Duration.minutes(9), overlap: cdk.OverlapPolicy.BUFFER_ONE,',
          '    timeWindow: TimeWindow.flexible(Duration.minutes(10)),',
          '  });',
          '  weekly.metricFailed();',
          '  exportsWorker.metricLeasesLost();',
          "  jobs.addJob('daily-digest', { schedule: ScheduleExpression.rate(Duration.days(1)), entry: 'src/jobs/digest.ts', workerOptions: { memorySize: 512 } });",
          '  // @ts-expect-error a time as a bare number',
          "  jobs.addJob('bare', { schedule: ScheduleExpression.rate(Duration.days(1)), entry: 'x.ts', timeout: 300 });",
          '  // @ts-expect-error neither worker nor entry',
          "  jobs.addJob('neither', { schedule: ScheduleExpression.rate(Duration.days(1)) });",
          '  // @ts-expect-error both worker and entry',
          "  jobs.addJob('both', { schedule: ScheduleExpression.rate(Duration.days(1)), worker: exportsWorker, entry: 'x.ts' });",
          '}',
        ].join('\n');
        const readFile = host.readFile;
        host.readFile = (file) => (file === appFile ? app : readFile(file));
        const fileExists = host.fileExists;
        host.fileExists = (file) => file === appFile || fileExists(file);
        const program = ts.createProgram([appFile, ...declarations], options, host);
        // Only this package's files: aws-cdk-lib's own declarations are aws-cdk-lib's business.
        const ours = program
          .getSourceFiles()
          .filter((file) => file.fileName === appFile || file.fileName.startsWith(installed.packageDir));
        return ours.flatMap((file) =>
          [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map(
            (d) => `${relative(APP, file.fileName)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
          ),
        );
      });

      expect(problems).toEqual([]);
    },
    SLOW,
  );
});
