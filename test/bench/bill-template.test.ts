/**
 * The bill in bench/results.json was priced on the templates of the three bench stacks as the constructs build them
 * then. This test synthesizes them again (through the public API, without bundling) and fails when a count the bill
 * prices differs: a new alarm, function, queue or alarmed metric is not in the bill until `npm run bench` runs again.
 */
import { describe, expect, it } from 'vitest';
import { stackCases } from '../../bench/bill-figure';
import { readResults } from '../../bench/generated-docs';
import { synthesize, templateCounts } from '../../bench/stack-template';
import { MetricName } from '../../functions/protocol/metric-names';

const results = readResults() as ReturnType<typeof readResults> & {
  bill: { runtime?: { series?: { name: string }[]; logLinesPerOccurrence?: number } };
};

describe('bench/results.json against the templates of the bench stacks', () => {
  for (const { shape, workload } of stackCases()) {
    it(`prices what the template of "${workload.name}" holds (else run \`npm run bench\`)`, () => {
      const priced = results.bill.templates[workload.name];
      expect(priced, `results.json has no template counts for "${workload.name}"`).toBeDefined();
      expect(templateCounts(synthesize(shape))).toEqual(priced);
    });
  }

  it('priced only custom metrics that functions/protocol/metric-names.ts declares', () => {
    const declared = new Set<string>(Object.values(MetricName));
    const priced = (results.bill.runtime?.series ?? []).map((s) => s.name);
    expect(priced.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('measured a healthy occurrence writing no custom metric by default: the detailed metrics are opt-in', () => {
    // The capture worked (the worker's outcome line was read), and it held no EMF series: none is billed per worker.
    expect(results.bill.runtime?.logLinesPerOccurrence).toBeGreaterThan(0);
    expect(results.bill.runtime?.series).toEqual([]);
  });
});
