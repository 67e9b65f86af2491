/**
 * Packs this repository as `npm publish` would and installs the tarball into a folder the way a user's app gets it,
 * offline, from the npm cache that `npm ci` filled. test/package/pack.test.ts checks the result; a test of an example
 * app calls packAndInstall on its own copy of the app.
 *
 * Why the install goes through a lockfile: the cache `npm ci` fills holds the tarballs and the abbreviated metadata
 * of each package (the "corgi" documents npm asks for when a lockfile names no tarball URL, as ours does not), but to
 * resolve `npm install --offline <tarball> aws-cdk-lib@2.276.0` npm 11 asks for the full documents (arborist's
 * fetchManifest sets fullMetadata), which are not there: ERESOLVE "Found: aws-cdk-lib@undefined", the metadata
 * ENOTCACHED. A lockfile names every package with its version and integrity, and npm then needs only the
 * tarballs, which `npm ci` did cache. consumerLockfile writes that lockfile from this repository's package-lock.json:
 * the consumer gets the very versions the tests here ran with, and only the packages reachable from the tarball's
 * declared dependencies and the consumer's own, so an import of an undeclared package still fails to resolve.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..');

/** What `npm pack --json` reports about the tarball, with the path it was written to. */
export interface PackedTarball {
  readonly path: string;
  readonly name: string;
  readonly version: string;
  /** Bytes of the .tgz. */
  readonly size: number;
  readonly unpackedSize: number;
  readonly integrity: string;
  /** Paths inside the package, `dist/lib/index.js`, … */
  readonly files: readonly string[];
}

/** The files a user's app needs from the tarball: the entry points, their types and the bundled handlers' entries. */
export const REQUIRED_FILES: readonly string[] = [
  'package.json',
  'README.md',
  // The license package.json names (Apache-2.0); npm packs it whatever `files` says.
  'LICENSE',
  'bin/occurrences/bin.cjs',
  'dist/lib/index.js',
  'dist/lib/index.d.ts',
  'dist/lib/handler-entry.js',
  'dist/functions/index.js',
  'dist/functions/index.d.ts',
  'dist/functions/trigger.js',
  'dist/functions/worker.js',
  'dist/functions/notifier.js',
  'dist/functions/reconciler.js',
  'dist/operations/index.js',
  'dist/operations/index.d.ts',
  'dist/testing/index.js',
  'dist/testing/index.d.ts',
  // The sources the user's bundler reads (lib/handler-entry.ts, the runtime's "scheduled-jobs-source" condition).
  'functions/index.ts',
  'functions/trigger.ts',
  'functions/notifier.ts',
  'functions/reconciler.ts',
  'dist/bin/occurrences.js',
  // The console: its server, and its page's source, which esbuild bundles when the console starts.
  'dist/console/server/index.js',
  'console/web/main.tsx',
  'console/contract.ts',
];

/**
 * What the tarball must not hold: tests, the simulation, the scripts, the benchmarks, the examples and the sample
 * app's jobs (as sources or compiled into dist/), TypeScript sources (declarations aside), build leftovers.
 */
export function unwantedFiles(files: readonly string[]): string[] {
  return files.filter(
    (file) =>
      /^(test|sim|scripts|bench|examples|lib|testing|operations|cdk\.out|node_modules)\//.test(file) ||
      /^dist\/(test|sim|scripts|bench|examples)\//.test(file) ||
      // The sample app, wherever it would land: its stack, its jobs (functions/jobs/ before they moved).
      /sample/i.test(file) ||
      /^(dist\/)?functions\/jobs\//.test(file) ||
      // The functions' sources are shipped (the bundler reads them: lib/handler-entry.ts), and the console page's (it
      // is bundled when the console starts: console/server/page-bundle.ts); no other source is.
      (/\.(ts|tsx|mts|cts)$/.test(file) &&
        !/\.d\.ts$/.test(file) &&
        !/^functions\/.*\.ts$/.test(file) &&
        !/^console\/(web\/.*\.tsx?|contract\.ts)$/.test(file)) ||
      /\.tsbuildinfo$/.test(file),
  );
}

/**
 * The source maps in the tarball that name a source the tarball lacks, as `map: source`: a stack trace or a
 * debugger reading such a map would point into a file the user cannot open. `readMap` gives a map's JSON text.
 */
export function mapsNamingMissingSources(files: readonly string[], readMap: (file: string) => string): string[] {
  const present = new Set(files);
  return files
    .filter((file) => file.endsWith('.map'))
    .flatMap((file) => {
      const map = JSON.parse(readMap(file)) as { sourceRoot?: string; sources?: string[] };
      const dir = posix.dirname(file);
      return (map.sources ?? [])
        .map((source) => posix.normalize(posix.join(dir, map.sourceRoot ?? '', source)))
        .filter((source) => !present.has(source))
        .map((source) => `${file}: ${source}`);
    });
}

/**
 * The package.json scripts that name a file or folder the tarball lacks, as `script: path`: `tsx scripts/local.ts`,
 * `bash scripts/lint-template.sh`. A word is taken for a path when it has a `/` or a script's extension; a URL, an
 * option's value under node_modules/ (a cache) and a path the tarball holds (or a folder of it) are not counted.
 */
export function scriptsNamingMissingFiles(
  scripts: Readonly<Record<string, string>> | undefined,
  files: readonly string[],
): string[] {
  const present = new Set(files);
  const holds = (target: string) => present.has(target) || files.some((file) => file.startsWith(`${target}/`));
  return Object.entries(scripts ?? {}).flatMap(([name, command]) =>
    command
      .split(/[\s=;&|()'"]+/)
      .filter((word) => word.includes('/') || /\.(c|m)?(ts|js)$|\.sh$/.test(word))
      .filter((word) => !/^[a-z]+:\/\//i.test(word) && !word.startsWith('node_modules/') && !word.startsWith('-'))
      .map((word) => word.replace(/^\.\//, '').replace(/\/$/, ''))
      .filter((word) => !holds(word))
      .map((word) => `${name}: ${word}`),
  );
}

export function missingFiles(files: readonly string[], required: readonly string[] = REQUIRED_FILES): string[] {
  const present = new Set(files);
  return required.filter((file) => !present.has(file));
}

/** Steps and how long each took, in the order they ran. */
export type Timings = Array<{ step: string; seconds: number }>;

/** Runs `work`, then prints how long it took as `[package] <step>: <seconds> s` and adds it to `timings`. */
export async function timed<T>(step: string, work: () => Promise<T>, timings: Timings = []): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    timings.push({ step, seconds });
    console.log(`[package] ${step}: ${seconds.toFixed(1)} s`);
  }
}

/**
 * The environment for a child npm or node: without what an outer `npm test` exported (npm_package_*,
 * npm_lifecycle_*, npm_config_local_prefix would point a nested npm at this repository) and without NODE_PATH, which
 * could let a require succeed that an installed package would fail. The cache location and registry are kept.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !keep.has(key.toLowerCase())) continue;
    if (key === 'NODE_PATH' || key === 'INIT_CWD' || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit (the caller asserts on `code`). */
export function run(file: string, args: readonly string[], cwd: string, env = cleanEnv()): Promise<RunResult> {
  return new Promise((done, fail) => {
    execFile(file, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        fail(error);
        return;
      }
      done({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
  });
}

function check(result: RunResult, what: string): RunResult {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}\n${result.stderr}\n${result.stdout}`);
  return result;
}

/**
 * One pack at a time per checkout: `npm pack` rebuilds dist/ (prepack), and two test files packing at once would
 * delete each other's output. A lock folder in the temp dir, keyed by the checkout; one older than ten minutes is
 * taken to be left by a killed run.
 */
async function withPackLock<T>(work: () => Promise<T>): Promise<T> {
  const key = createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12);
  const lock = join(tmpdir(), `scheduled-jobs-stack-pack-${key}.lock`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 10 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      await new Promise((wake) => setTimeout(wake, 500));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `npm pack` of this checkout into `destination` (prepack builds dist/ first). */
export async function packTarball(destination: string): Promise<PackedTarball> {
  mkdirSync(destination, { recursive: true });
  const result = await withPackLock(() =>
    run('npm', ['pack', '--json', '--offline', '--pack-destination', destination], REPO_ROOT),
  );
  check(result, 'npm pack');
  // Lifecycle scripts print to stderr under --json; stdout is the JSON array alone.
  const [report] = JSON.parse(result.stdout) as Array<{
    name: string;
    version: string;
    filename: string;
    size: number;
    unpackedSize: number;
    integrity: string;
    files: Array<{ path: string }>;
  }>;
  return {
    path: join(destination, report.filename),
    name: report.name,
    version: report.version,
    size: report.size,
    unpackedSize: report.unpackedSize,
    integrity: report.integrity,
    files: report.files.map((file) => file.path).sort(),
  };
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optional?: boolean;
  [field: string]: unknown;
}

interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [field: string]: unknown;
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

function repoLockPackages(): Record<string, LockEntry> {
  return readJson<{ packages: Record<string, LockEntry> }>(join(REPO_ROOT, 'package-lock.json')).packages;
}

/** The lock key a package named `name` resolves to from the package at `from`, as Node walks up node_modules. */
function resolveKey(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const key = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (key in packages) return key;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/**
 * A package-lock.json for an app whose dependencies are `dependencies` (name → version or file: spec) plus the packed
 * tarball, every other package taken from this repository's package-lock.json at the version pinned there. Throws
 * when the app asks for a version the lock does not pin, or a package needs one the lock does not hold.
 */
export function consumerLockfile(
  appDir: string,
  app: { name: string; version: string; dependencies: Record<string, string> },
  tarball: PackedTarball,
): object {
  const locked = repoLockPackages();
  const manifest = readJson<PackageJson & { peerDependencies?: Record<string, string> }>(
    join(REPO_ROOT, 'package.json'),
  );
  const ownKey = `node_modules/${tarball.name}`;
  const tarballSpec = `file:${relative(appDir, tarball.path)}`;
  const source: Record<string, LockEntry> = {
    ...locked,
    '': { dependencies: app.dependencies },
    [ownKey]: {
      version: tarball.version,
      resolved: tarballSpec,
      integrity: tarball.integrity,
      license: manifest.license,
      dependencies: manifest.dependencies,
      peerDependencies: manifest.peerDependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  for (const [name, spec] of Object.entries(app.dependencies)) {
    if (name === tarball.name) continue;
    const pinned = locked[`node_modules/${name}`]?.version;
    if (pinned !== spec) {
      throw new Error(`${name}@${spec}: package-lock.json pins ${pinned ?? 'no version of it'}; ask for that one`);
    }
  }

  const reached = new Set<string>(['']);
  const queue = [''];
  while (queue.length > 0) {
    const from = queue.shift() as string;
    const entry = source[from];
    const edges: Array<[string, boolean]> = [
      ...Object.keys(entry.dependencies ?? {}).map((name): [string, boolean] => [name, false]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((name): [string, boolean] => [name, true]),
      ...Object.keys(entry.peerDependencies ?? {}).map((name): [string, boolean] => [
        name,
        entry.peerDependenciesMeta?.[name]?.optional === true,
      ]),
    ];
    for (const [name, optional] of edges) {
      const key = resolveKey(source, from, name);
      if (key === undefined) {
        if (optional) continue;
        throw new Error(`${from || 'the app'} needs ${name}, which package-lock.json does not hold`);
      }
      if (reached.has(key)) continue;
      reached.add(key);
      queue.push(key);
    }
  }

  const packages: Record<string, LockEntry> = {
    '': { name: app.name, version: app.version, dependencies: app.dependencies },
  };
  for (const key of [...reached].filter((k) => k !== '').sort()) {
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = source[key];
    packages[key] = entry;
  }
  return { name: app.name, version: app.version, lockfileVersion: 3, requires: true, packages };
}

export interface Installed {
  readonly tarball: PackedTarball;
  /** Where the package is in the app: `<targetDir>/node_modules/<name>`. */
  readonly packageDir: string;
  readonly timings: Timings;
}

/**
 * Packs this checkout and installs the tarball into `targetDir` (created if needed; an app's package.json there is
 * kept, its dependencies set to the versions package-lock.json pins), with aws-cdk-lib and constructs (the peer
 * dependencies) and `extraPackages` (names of packages this repository's lock holds, e.g. `aws-cdk` for a synth).
 * Offline: `npm ci --offline` from a lockfile made by consumerLockfile.
 */
export async function packAndInstall(targetDir: string, extraPackages: readonly string[] = []): Promise<Installed> {
  const timings: Timings = [];
  mkdirSync(targetDir, { recursive: true });
  const packDir = mkdtempSync(join(tmpdir(), 'scheduled-jobs-stack-tgz-'));
  const tarball = await timed('npm pack (prepack: npm run build)', () => packTarball(packDir), timings);

  const locked = repoLockPackages();
  const pinned = (name: string): string => {
    const version = locked[`node_modules/${name}`]?.version;
    if (version === undefined) throw new Error(`${name} is not in package-lock.json, so it is not in the npm cache`);
    return version;
  };
  const appFile = join(targetDir, 'package.json');
  let app: PackageJson = { name: 'consumer-app', version: '0.0.0', private: true };
  try {
    app = readJson<PackageJson>(appFile);
  } catch {
    // no app here yet: a bare one
  }
  const names = new Set([
    ...Object.keys(app.dependencies ?? {}),
    ...Object.keys(app.devDependencies ?? {}),
    'aws-cdk-lib',
    'constructs',
    ...extraPackages,
  ]);
  names.delete(tarball.name);
  const dependencies: Record<string, string> = {
    [tarball.name]: `file:${relative(targetDir, tarball.path)}`,
    ...Object.fromEntries([...names].sort().map((name) => [name, pinned(name)])),
  };
  const { devDependencies: _devDependencies, ...rest } = app;
  const consumer = { ...rest, name: app.name ?? 'consumer-app', version: app.version ?? '0.0.0', dependencies };
  writeFileSync(appFile, `${JSON.stringify(consumer, null, 2)}\n`);
  const lock = consumerLockfile(targetDir, { name: consumer.name, version: consumer.version, dependencies }, tarball);
  writeFileSync(join(targetDir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);

  await timed(
    'npm ci --offline (the tarball, its dependencies, aws-cdk-lib, constructs)',
    async () => check(await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], targetDir), 'npm ci --offline'),
    timings,
  );
  return { tarball, packageDir: join(targetDir, 'node_modules', tarball.name), timings };
}
