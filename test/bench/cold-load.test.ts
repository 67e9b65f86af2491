import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  aboveBaseline,
  BARE_ANCHOR,
  bundle,
  esbuildOptionsFor,
  median,
  parseCallgrindTotal,
  ratio,
  relativeSpread,
  SUBJECTS,
  selectSubjects,
  sourceOf,
} from '../../bench/cold-load';
import { FUNCTION_RUNTIME, JOB_FUNCTION_BUNDLING } from '../../lib/job-function';

// The head of a callgrind output file, as valgrind 3.22 writes it, with its totals shortened.
const CALLGRIND_HEAD = `# callgrind format
version: 1
creator: callgrind-3.22.0
pid: 12056
cmd:  /usr/bin/node --single-threaded -e require(process.argv[1]) /tmp/cold-load-x/trigger/index.js
part: 1


desc: I1 cache: 
desc: D1 cache: 
desc: LL cache: 

desc: Timerange: Basic block 0 - 81234567
desc: Trigger: Program termination

positions: line
events: Ir
summary: 484012345


ob=(1) /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
`;

describe('Function: median', () => {
  it('takes the middle of an odd number of runs, in any order', () => {
    expect(median([30, 10, 20])).toBe(20);
  });

  it('averages the two middle values of an even number', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('refuses no values', () => {
    expect(() => median([])).toThrow('median of no values');
  });
});

describe('Function: relativeSpread', () => {
  it('is max - min over the median', () => {
    expect(relativeSpread([99, 100, 102])).toBeCloseTo(0.03, 10);
  });

  it('is 0 for identical runs', () => {
    expect(relativeSpread([7, 7, 7])).toBe(0);
  });
});

describe('Function: aboveBaseline and ratio', () => {
  it("subtracts the baseline's median from the runs' median", () => {
    expect(aboveBaseline([400, 380, 390], [100, 101, 99])).toBe(290);
  });

  it("divides by the anchor's figure", () => {
    const trigger = aboveBaseline([390, 391, 389], [100, 100, 100]);
    const bare = aboveBaseline([300, 300, 301], [100, 100, 100]);
    expect(ratio(trigger, bare)).toBeCloseTo(1.45, 10);
  });

  it('refuses an anchor at or below the empty module', () => {
    expect(() => ratio(10, 0)).toThrow('means nothing');
  });
});

describe('Function: parseCallgrindTotal', () => {
  it('reads the summary line of a callgrind output file', () => {
    expect(parseCallgrindTotal(CALLGRIND_HEAD)).toBe(484_012_345);
  });

  it('falls back to the totals line', () => {
    expect(parseCallgrindTotal('events: Ir\nfn=main\n1 5\ntotals: 1234\n')).toBe(1234);
  });

  it('throws when neither line is there', () => {
    expect(() => parseCallgrindTotal('events: Ir\n')).toThrow('no summary: or totals: line');
  });
});

describe('Function: esbuildOptionsFor', () => {
  it("maps the stack's bundling options the way NodejsFunction does", () => {
    expect(esbuildOptionsFor(JOB_FUNCTION_BUNDLING, FUNCTION_RUNTIME.name)).toMatchObject({
      bundle: true,
      platform: 'node',
      target: 'node24',
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      mainFields: ['module', 'main'],
      alias: { '@aws-sdk/credential-provider-node': join(__dirname, '../../functions/aws/env-credentials.ts') },
    });
  });

  it('fails on an option it does not map, rather than bundling differently from the stack', () => {
    const withExternals = { ...JOB_FUNCTION_BUNDLING, externalModules: ['@aws-sdk/*'] };
    expect(() => esbuildOptionsFor(withExternals, 'nodejs24.x')).toThrow('externalModules');
  });
});

describe('Function: sourceOf', () => {
  it('names the package of a file in node_modules, scoped or not, the innermost one when nested', () => {
    expect(sourceOf('node_modules/@smithy/core/dist-es/index.js')).toBe('@smithy/core');
    expect(sourceOf('node_modules/zod/v4/mini/schemas.js')).toBe('zod');
    expect(sourceOf('node_modules/@aws-sdk/client-sqs/node_modules/@smithy/util/dist/x.js')).toBe('@smithy/util');
  });

  it("names the project's own files under functions/, and other folders whole", () => {
    expect(sourceOf('functions/protocol/job-settings.ts')).toBe('functions/protocol/job-settings');
    expect(sourceOf('bench/anchors/bare-trigger.ts')).toBe('bench');
  });
});

describe('Function: selectSubjects', () => {
  it('measures everything by default', () => {
    expect(selectSubjects(undefined)).toEqual(SUBJECTS);
  });

  it('always keeps the bare anchor, which every ratio needs', () => {
    expect(selectSubjects(['trigger']).map((s) => s.name)).toEqual(['trigger', BARE_ANCHOR]);
  });

  it('refuses an unknown name, listing the known ones', () => {
    expect(() => selectSubjects(['trigerr'])).toThrow(/unknown handler\(s\) trigerr; known: trigger, worker/);
  });
});

describe('Function: bundle, on the trigger', () => {
  it('carries only the recorder of the occurrence store, and no schema library', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'trigger-bundle-'));
    try {
      const trigger = SUBJECTS.find((s) => s.name === 'trigger');
      const { breakdown } = await bundle(join(__dirname, '../..', trigger?.entry ?? ''), outDir);
      const sources = breakdown.map((p) => p.source);
      expect(sources).toContain('functions/aws/occurrence-recorder');
      expect(sources).not.toContain('functions/aws/occurrence-store');
      // zod costs the trigger 17 M instructions at load (functions/protocol/field-checks.ts).
      expect(sources).not.toContain('zod');
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });
});

describe('Function: bundle, the credential chain', () => {
  /** The packages of the SDK's credential chain beyond the environment's: none may be in a bundle. */
  const CHAIN =
    /@aws-sdk\/(credential-provider-(node|ini|sso|process|web-identity|http|login)|nested-clients)\/|@smithy\/credential-provider-imds\//;

  it.each(['trigger', 'worker'])(
    'the %s carries the environment credentials only: no provider chain, no STS or SSO client',
    async (name) => {
      const outDir = mkdtempSync(join(tmpdir(), `${name}-credentials-`));
      try {
        const subject = SUBJECTS.find((s) => s.name === name);
        const { breakdown } = await bundle(join(__dirname, '../..', subject?.entry ?? ''), outDir);
        const sources = breakdown.map((p) => p.source);
        expect(sources).toContain('@aws-sdk/credential-provider-env');
        expect(sources.filter((source) => CHAIN.test(`${source}/`))).toEqual([]);
      } finally {
        rmSync(outDir, { recursive: true, force: true });
      }
    },
  );
});
