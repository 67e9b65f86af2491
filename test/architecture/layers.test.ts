/**
 * The layers import one way. The functions are what runs in Lambda: they never import the CDK code (lib/), the
 * CLI (bin/), the local driver (scripts/) or the simulation (sim/), and the protocol inside them stays free of any
 * SDK. Scripts, the CLI, the simulation and the benchmarks import no test code. A rule broken here fails with the file and the
 * import that break it.
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
    mustNotImport: ['lib', 'bin', 'scripts', 'sim', 'test', 'testing', 'aws-cdk-lib', 'constructs'],
  },
  { from: 'functions/protocol', mustNotImport: ['functions/aws', 'functions/runtime', '@aws-sdk/', '@smithy/'] },
  { from: 'lib', mustNotImport: ['bin', 'scripts', 'sim', 'test', 'testing'] },
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
  { from: 'testing', mustNotImport: ['bin', 'sim', 'test', 'bench'] },
  // The operator actions' entry point: the protocol's actions, the AWS adapters and the CLI's job catalogue.
  { from: 'operations', mustNotImport: ['lib', 'scripts', 'sim', 'test', 'testing', 'bench'] },
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
    return /\.(ts|mts|cts)$/.test(entry.name) ? [path] : [];
  });
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
});
