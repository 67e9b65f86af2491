/**
 * docs/benchmarks.md's bill and per-million tables are generated from bench/results.json (bench/generated-docs.ts):
 * the committed page must be what the committed results generate, and the generator must put each stack's line in
 * its row whatever numbers the line's name carries.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BENCHMARKS_DOC,
  count,
  type GeneratedInputs,
  GeneratedRegionError,
  generatedRegions,
  lineLabel,
  readResults,
  usd,
  withRegions,
} from '../../bench/generated-docs';

describe('docs/benchmarks.md', () => {
  it('holds the tables bench/results.json generates (run `npm run bench:docs` after `npm run bench`)', () => {
    const page = readFileSync(BENCHMARKS_DOC, 'utf8');
    expect(page).toBe(withRegions(page, generatedRegions(readResults())));
  });
});

const line = (group: string, item: string, value: number) => ({ group, item, quantity: value, unit: 'x', usd: value });

const RESULTS: GeneratedInputs = {
  machine: { date: '2026-12-07T20:00:00.000Z', cores: 2, node: 'v20' },
  benchSeconds: 300.4,
  cost: {
    usage: { lambda: [{ fn: 'trigger', ms: 90.2, cpuMs: 10.8, motoMs: 50, requests: 2 }] },
    lines: [{ item: 'S3 PUT', quantity: 1, unit: 'request', usdPerMillion: 5 }],
    totalPerMillion: 5,
    lambdaTimeModel: 'the model',
    alternatives: [{ name: 'Temporal Cloud', usdPerMillion: 205.3, how: '≥ 4 actions a run' }],
  },
  bill: {
    stacks: [
      {
        bill: {
          workload: 'A',
          lines: [line('CloudWatch', 'alarms (65, billed by the 66 metrics they read)', 6.6)],
          total: 6.6,
        },
        assumptions: '',
        alternatives: [{ name: 'Temporal Cloud', usd: 107 }],
      },
      {
        bill: {
          workload: 'B',
          lines: [
            line('CloudWatch', 'alarms (29, billed by the 30 metrics they read)', 3),
            line('Registry', 'at rest', 0.05),
          ],
          total: 3.05,
        },
        assumptions: '',
        alternatives: [{ name: 'Temporal Cloud', usd: 108 }],
      },
    ],
    templates: { A: { alarms: 65, alarmMetrics: 66, pointInTimeRecovery: true }, B: { alarms: 29 } },
    perJobFixed: { joinsWorker: 0, ownWorker: 1.7 },
  },
  reconcilerDeployed: { idleCpuMs: 1002.4 },
};

describe('Function: generatedRegions', () => {
  const regions = generatedRegions(RESULTS);

  it("puts each stack's line in one row, named without the stack's own numbers; '-' where a stack has none", () => {
    expect(lineLabel({ group: 'SQS', item: "Lambda's pollers' empty receives (10 queues, modelled)" })).toBe(
      "SQS: Lambda's pollers' empty receives",
    );
    expect(lineLabel({ group: 'DynamoDB', item: 'storage: 91,250 rows kept 90 days' })).toBe('DynamoDB: storage');
    expect(regions.bills).toContain('| CloudWatch: alarms | 6.60 | 3.00 |');
    expect(regions.bills).toContain('| Registry: at rest | - | 0.0500 |');
    expect(regions.bills).toContain('| **total** | **6.60** | **3.05** |');
    expect(regions.bills).toContain('| beside it: Temporal Cloud | 107.00 | 108.00 |');
  });

  it('shows the template counts per stack, booleans as yes or no, a count the results lack as -', () => {
    expect(regions['bill-templates']).toContain('| alarms | 65 | 29 |');
    expect(regions['bill-templates']).toContain(
      '| alarm metrics billed (a metric-math alarm bills each metric it reads) | 66 | - |',
    );
    expect(regions['bill-templates']).toContain('| point-in-time recovery | yes | - |');
  });

  it('prints the per-million lines, the Lambda time model with CPU and modelled ms, and the alternatives', () => {
    expect(regions['per-million']).toContain('| **all in** |  |  | **5.00** |');
    expect(regions['per-million']).toContain('the model');
    expect(regions['per-million']).toContain('| trigger | 10.8 | 2 | 90 | 50 |');
    expect(regions['per-million']).toContain('1002 ms of CPU');
    expect(regions['per-million']).toContain('| Temporal Cloud | 205.30 | ≥ 4 actions a run |');
    expect(regions['bench-provenance']).toContain('2026-12-07 on 2 cores, Node v20, 300 s');
  });

  it('prints a GB per occurrence in exponent notation, not as 0, and counts with separators', () => {
    expect(count(7.36e-7)).toBe('7.36e-7');
    expect(count(91_250)).toBe('91,250');
    expect(count(0)).toBe('0');
  });

  it('prints cents above a dollar and four places below', () => {
    expect(usd(12.345)).toBe('12.35');
    expect(usd(0.01234)).toBe('0.0123');
    expect(usd(0)).toBe('0');
  });
});

describe('Function: withRegions', () => {
  it('replaces only the text between the markers, and again to the same page', () => {
    const page = 'a\n<!-- generated:x -->\nold\n<!-- /generated:x -->\nb\n';
    const once = withRegions(page, { x: 'new' });
    expect(once).toBe('a\n<!-- generated:x -->\nnew\n<!-- /generated:x -->\nb\n');
    expect(withRegions(once, { x: 'new' })).toBe(once);
  });

  it('names the region a page lacks', () => {
    expect(() => withRegions('no markers', { bills: '' })).toThrow(GeneratedRegionError);
    expect(() => withRegions('no markers', { bills: '' })).toThrow('<!-- generated:bills -->');
  });
});
