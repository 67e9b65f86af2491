/**
 * The layers import one way. The functions are what runs in Lambda: they never import the CDK code (lib/), the
 * CLI (bin/), the local driver (scripts/) or the simulation (sim/), and the protocol inside them stays free of any
 * SDK. Scripts, the CLI, the simulation and the benchmarks import no test code. A rule broken here fails with the file and the
 * import that break it.
 *
 * And no import cycle among the functions, the constructs, the CLI and the test kit, type-only imports included: a
 * cycle of types is still two modules that cannot be read, changed or moved one without the other (a change once broke
 * one of 23 modules in functions/protocol that five type-only imports held). A cycle fails with its files in order.
 */
import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

interface LayerRule {
  /** The folder whose files the rule applies to, relative to the repository. */
  readonly from: string;
  /** Folders (relative to the repository) or package prefixes its files must not import. */
  readonly mustNotImport: readonly string[];
  /** Files of `from` that may import one of those folders, with the reason. */
  readonly except?: Readonly<Record<string, { readonly mayImport: string; readonly why: string }>>;
}

const RULES: readonly LayerRule[] = [
  {
    from: 'functions',
    mustNotImport: ['lib', 'bin', 'console', 'scripts', 'sim', 'test', 'testing', 'aws-cdk-lib', 'constructs'],
  },
  { from: 'functions/protocol', mustNotImport: ['functions/aws', 'functions/runtime', '@aws-sdk/', '@smithy/'] },
  { from: 'lib', mustNotImport: ['bin', 'console', 'scripts', 'sim', 'test', 'testing'] },
  { from: 'bin', mustNotImport: ['scripts', 'sim', 'test', 'testing'] },
  {
    from: 'scripts',
    mustNotImport: ['test', 'testing'],
    except: {
      'scripts/local.ts': {
        mayImport: 'testing',
        why: "npm run local runs this repository's sample as a user's app runs: synth, then runLocally",
      },
      // The emulator (moto, its clients and resources, the SQS and stream event sources) lives in testing/local/,
      // where the published runLocally needs it; these scripts drive the same emulator.
      'scripts/ensure-moto.ts': { mayImport: 'testing', why: 'the command line of testing/local/moto-server.ts' },
      'scripts/local/pipeline.ts': { mayImport: 'testing', why: 'the local pipeline runs on the emulator' },
      'scripts/local/export-worker-process.ts': { mayImport: 'testing', why: 'a worker process on the emulator' },
      'scripts/long-export.ts': { mayImport: 'testing', why: 'runs the local pipeline on moto' },
    },
  },
  // The test kit users import: it may use the functions, the schedule evaluator and the local emulation, nothing of ours.
  { from: 'testing', mustNotImport: ['bin', 'console', 'sim', 'test', 'bench'] },
  // The operator actions' entry point: the protocol's actions, the AWS adapters and the CLI's job catalogue.
  { from: 'operations', mustNotImport: ['lib', 'console', 'scripts', 'sim', 'test', 'testing', 'bench'] },
  // The console: its server is an operator's tool beside the CLI (it runs the same actions through the same target);
  // the CLI's command builds its adapters and hands them in, so the console imports no CLI code. Its page runs in a browser and shares nothing with the server but the API's types (console/contract.ts).
  { from: 'console', mustNotImport: ['lib', 'bin', 'scripts', 'sim', 'test', 'testing', 'bench'] },
  {
    from: 'console/web',
    mustNotImport: ['functions', 'bin', 'operations', 'console/server', '@aws-sdk/', '@smithy/', 'node:', 'hono'],
  },
  { from: 'sim', mustNotImport: ['test', 'scripts', 'bin', 'testing'] },
  { from: 'bench', mustNotImport: ['test', 'bin'] },
];

/** The module specifiers a TypeScript source imports or re-exports, static or dynamic. */
function importSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [/\b(?:import|export)\s[^'"`;]*?\sfrom\s+['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]/g];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) specifiers.push(match[1]);
  }
  for (const match of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) specifiers.push(match[1]);
  return specifiers;
}

/** Where a specifier points: a repository-relative path for a relative import, else the package name as written. */
function importTarget(fileFromRoot: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return relative(ROOT, resolve(ROOT, dirname(fileFromRoot), specifier))
    .split('\\')
    .join('/');
}

/** The imports of one file that break a rule, as `file imports target (rule: from must not import X)`. */
function violations(fileFromRoot: string, source: string, rules: readonly LayerRule[] = RULES): string[] {
  const found: string[] = [];
  for (const rule of rules) {
    if (!isInside(fileFromRoot, rule.from)) continue;
    for (const specifier of importSpecifiers(source)) {
      const target = importTarget(fileFromRoot, specifier);
      const banned = rule.mustNotImport.find((b) => (b.endsWith('/') ? target.startsWith(b) : isInside(target, b)));
      if (banned !== undefined && rule.except?.[fileFromRoot]?.mayImport !== banned) {
        found.push(`${fileFromRoot} imports '${specifier}' (${rule.from}/ must not import ${banned})`);
      }
    }
  }
  return found;
}

function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}

function sourceFiles(folder: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(ROOT, folder), { withFileTypes: true });
  } catch {
    return []; // a layer that does not exist yet has nothing to check
  }
  return entries.flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|tsx|mts|cts)$/.test(entry.name) ? [path] : [];
  });
}

/** The folders in which no import cycle may form. */
const ACYCLIC_FOLDERS = ['functions', 'lib', 'bin', 'testing', 'console'] as const;

/**
 * Cycles known and owned elsewhere, each as its files in the order `importCycles` reports them, with who removes it.
 * An entry whose cycle is gone fails the test below, so the list only shrinks.
 */
const KNOWN_CYCLES: Readonly<Record<string, string>> = {};

/** The file a relative specifier names among `files` (`./x` is x.ts, x.mts, x.cts or x/index.ts), else undefined. */
function resolveImport(fileFromRoot: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = importTarget(fileFromRoot, specifier);
  const candidates = [target, `${target}.ts`, `${target}.tsx`, `${target}.mts`, `${target}.cts`, `${target}/index.ts`];
  if (target.endsWith('.js')) candidates.push(`${target.slice(0, -3)}.ts`);
  return candidates.find((candidate) => files.has(candidate));
}

/** Each file's imports of the other files given (static, type-only, re-exported and dynamic alike). */
function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const files = new Set(sources.keys());
  const graph = new Map<string, string[]>();
  for (const [file, source] of sources) {
    const targets = importSpecifiers(source).map((specifier) => resolveImport(file, specifier, files));
    graph.set(file, [...new Set(targets.filter((t): t is string => t !== undefined))].sort());
  }
  return graph;
}

/**
 * One cycle per tangle of files that import each other (a strongly connected component): the shortest cycle through
 * the tangle's first file in name order, as `a -> b -> a`, so that the same tangle always reads the same way.
 */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const tangles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const tangle: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      tangle.push(member);
    } while (member !== file);
    if (tangle.length > 1 || (graph.get(file) ?? []).includes(file)) tangles.push(tangle.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return tangles.map((tangle) => shortestCycle(graph, tangle)).sort();
}

/** The shortest path from the tangle's first file back to itself, through the tangle only (breadth first). */
function shortestCycle(graph: ReadonlyMap<string, readonly string[]>, tangle: readonly string[]): string {
  const members = new Set(tangle);
  const start = tangle[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0 && !cameFrom.has(start)) {
    const file = queue.shift() as string;
    for (const next of graph.get(file) ?? []) {
      if (!members.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, file);
      queue.push(next);
    }
  }
  const path = [start];
  for (let file = cameFrom.get(start) as string; file !== start; file = cameFrom.get(file) as string)
    path.unshift(file);
  path.unshift(start);
  const cycle = path.join(' -> ');
  const rest = tangle.length > path.length - 1 ? ` (one of a tangle of ${tangle.length}: ${tangle.join(', ')})` : '';
  return cycle + rest;
}

describe('layers', () => {
  it('finds the imports of a source, static, type-only, re-exported and dynamic', () => {
    const source = [
      "import { a } from '../lib/a';",
      "import type { B } from './b';",
      "export { c } from '../../test/c';",
      "const d = await import('@aws-sdk/client-s3');",
      "import './side-effect';",
      'import {',
      '  e,',
      "} from 'aws-cdk-lib';",
    ].join('\n');
    expect(importSpecifiers(source).sort()).toEqual(
      ['../lib/a', './b', '../../test/c', '@aws-sdk/client-s3', './side-effect', 'aws-cdk-lib'].sort(),
    );
  });

  it('reports an import of lib/ from functions/, and an SDK import from the protocol, with the rule broken', () => {
    expect(violations('functions/worker.ts', "import { X } from '../lib/resource-definitions';")).toEqual([
      "functions/worker.ts imports '../lib/resource-definitions' (functions/ must not import lib)",
    ]);
    expect(violations('functions/protocol/x.ts', "import { S3Client } from '@aws-sdk/client-s3';")).toEqual([
      "functions/protocol/x.ts imports '@aws-sdk/client-s3' (functions/protocol/ must not import @aws-sdk/)",
    ]);
    expect(violations('scripts/sim.ts', "import { run } from '../test/sim/world';")).toEqual([
      "scripts/sim.ts imports '../test/sim/world' (scripts/ must not import test)",
    ]);
  });

  it('allows the one script that runs the sample through the test kit, and no other script', () => {
    expect(violations('scripts/local.ts', "import { runLocally } from '../testing';")).toEqual([]);
    expect(violations('scripts/sim.ts', "import { runLocally } from '../testing';")).toEqual([
      "scripts/sim.ts imports '../testing' (scripts/ must not import testing)",
    ]);
    expect(violations('scripts/local.ts', "import { x } from '../test/x';")).toEqual([
      "scripts/local.ts imports '../test/x' (scripts/ must not import test)",
    ]);
  });

  it('allows what points the right way: lib/ reading the functions, a folder whose name only starts alike', () => {
    expect(violations('lib/stack.ts', "import { TABLE } from '../functions/protocol/table-schema';")).toEqual([]);
    expect(violations('functions/aws/x.ts', "import { y } from '../library-like/y';")).toEqual([]);
  });

  it('holds for every source file in the repository', () => {
    const files = RULES.flatMap((rule) => sourceFiles(rule.from));
    expect(files.length).toBeGreaterThan(20);
    const found = [...new Set(files)].flatMap((file) => violations(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds an import cycle, type-only imports included, and names its files in order', () => {
    const sources = new Map([
      ['functions/protocol/a.ts', "import type { B } from './b';"],
      ['functions/protocol/b.ts', "import { c } from './c';\nimport { x } from 'node:fs';"],
      ['functions/protocol/c.ts', "export type { A } from './a';"],
      ['functions/protocol/d.ts', "import { a } from './a';"],
    ]);
    expect(importCycles(importGraph(sources))).toEqual([
      'functions/protocol/a.ts -> functions/protocol/b.ts -> functions/protocol/c.ts -> functions/protocol/a.ts',
    ]);
    sources.set('functions/protocol/c.ts', "import { d } from '../protocol/d';");
    expect(importCycles(importGraph(sources))).toEqual([
      'functions/protocol/a.ts -> functions/protocol/b.ts -> functions/protocol/c.ts -> functions/protocol/d.ts -> functions/protocol/a.ts',
    ]);
  });

  it('reads a folder import as its index file, and finds no cycle where imports point one way', () => {
    const sources = new Map([
      ['lib/index.ts', "export * from './stack';"],
      ['lib/stack.ts', "import { t } from '../functions/protocol/table';"],
      ['functions/protocol/table.ts', "import { z } from 'zod';"],
      ['testing/kit.ts', "import { s } from '../lib';\nimport { t } from '../functions/protocol/table';"],
    ]);
    expect(importGraph(sources).get('testing/kit.ts')).toEqual(['functions/protocol/table.ts', 'lib/index.ts']);
    expect(importCycles(importGraph(sources))).toEqual([]);
    sources.set('functions/protocol/table.ts', "import type { Kit } from '../../testing/kit';");
    expect(importCycles(importGraph(sources))[0]).toMatch(/^functions\/protocol\/table\.ts -> testing\/kit\.ts -> /);
  });

  it(`has no import cycle among ${ACYCLIC_FOLDERS.join('/, ')}/ but the known ones, and each known one still exists`, () => {
    const files = ACYCLIC_FOLDERS.flatMap((folder) => sourceFiles(folder)).filter((file) => !file.endsWith('.d.ts'));
    expect(files.length).toBeGreaterThan(100);
    const cycles = importCycles(
      importGraph(new Map(files.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]))),
    );
    expect(cycles.filter((cycle) => KNOWN_CYCLES[cycle] === undefined)).toEqual([]);
    expect(Object.keys(KNOWN_CYCLES).filter((known) => !cycles.includes(known))).toEqual([]);
  });
});
