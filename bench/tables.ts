/** The bench's printed tables (cli-table3), one function per figure. */
import Table from 'cli-table3';
import { type BillFigure, TARGETS } from './bill-figure';
import type { CapacityTotals } from './capacity-ledger';
import type { AlternativeModel, CostLine } from './cost-model';
import type { ItemGrowth } from './figures';
import type { OperationCounts } from './paths';
import type { DeployedReconcilerFigures } from './reconciler-deployed';
import type { TickResult } from './tick';

export interface RequestRow {
  readonly what: string;
  readonly handler: OperationCounts;
  readonly eventSource: OperationCounts;
}

const fmt = (n: number, digits = 2): string => (Number.isInteger(n) ? String(n) : n.toFixed(digits));

function table(title: string, head: string[], rows: Array<Array<string | number>>, colWidths?: number[]): void {
  const t = new Table({ head, style: { head: [], border: [] }, ...(colWidths ? { colWidths, wordWrap: true } : {}) });
  for (const row of rows) t.push(row.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  console.log(`\n${title}\n${t.toString()}`);
}

const sum = (c: OperationCounts): number => Object.values(c).reduce((a, b) => a + b, 0);
const list = (c: OperationCounts): string =>
  Object.entries(c)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(', ') || '-';

/** The stream's polling is free to the user when Lambda does it; only the SQS event source's requests are billed. */
const sqsOnly = (c: OperationCounts): OperationCounts =>
  Object.fromEntries(Object.entries(c).filter(([k]) => k.startsWith('SQS.')));

export function printRequests(rows: readonly RequestRow[]): void {
  table(
    'Figure 1. Requests per occurrence (below the SDK, against moto)',
    ['path', 'handlers', 'by operation', 'SQS event source'],
    rows.map((r) => [r.what, sum(r.handler), list(r.handler), list(sqsOnly(r.eventSource))]),
  );
}

export function printCapacity(rows: ReadonlyArray<{ what: string; units: CapacityTotals }>): void {
  table(
    'Figure 2. DynamoDB capacity units (on-demand billing rules, sizes from the items in moto)',
    ['path', 'table WRU', 'index WRU', 'table RRU', 'index RRU'],
    rows.map((r) => [
      r.what,
      r.units.tableWriteUnits,
      r.units.indexWriteUnits,
      r.units.tableReadUnits,
      r.units.indexReadUnits,
    ]),
  );
}

export function printGrowth(growth: readonly ItemGrowth[], note: string): void {
  table(
    `Figure 2b. The occurrence item by attempts (history entries as measured, repeated); it ${note}`,
    ['attempts', 'item bytes', 'a write adding one history entry: table WRU', 'index WRU (history not projected)'],
    growth.map((g) => [g.attempts, g.itemBytes, g.completeWriteUnits, g.completeIndexWriteUnits]),
  );
}

export function printCost(lines: readonly CostLine[], total: number, alternatives: readonly AlternativeModel[]): void {
  table(
    'Figure 3. Cost per million occurrences, us-east-1 list prices (bench/prices.ts), happy path',
    ['item', 'per occurrence', 'unit', '$ per million', 'share'],
    [
      ...lines.map((l) => [
        l.item,
        l.quantity.toPrecision(3),
        l.unit,
        l.usdPerMillion.toFixed(3),
        `${((100 * l.usdPerMillion) / total).toFixed(1)} %`,
      ]),
      ['total', '', '', total.toFixed(2), '100 %'],
    ],
  );
  table(
    'Figure 3b. The same work elsewhere (models from list prices, not measured)',
    ['alternative', '$ per million', 'how it is counted'],
    alternatives.map((a) => [a.name, a.usdPerMillion.toFixed(2), a.how]),
    [28, 15, 70],
  );
}

export function printTicks(ticks: readonly TickResult[]): void {
  table(
    'Figure 5. One tick with N occurrences at once (moto, several pollers)',
    [
      'N',
      'pollers',
      'handler requests / occ.',
      'notifier re-read the row (of announced)',
      'SQS event source / occ.',
      'wall s',
      'a handler request at moto',
      'unsettled',
    ],
    ticks.map((t) => [
      t.occurrences,
      t.pollers,
      t.handlerRequestsPerOccurrence,
      `${(100 * t.notifierRowReadShare).toFixed(0)} %`,
      t.eventSourcePerOccurrence,
      (t.wallMs / 1000).toFixed(1),
      `${(100 * t.motoShare).toFixed(0)} %`,
      t.unsettled,
    ]),
  );
}

const usd = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(4));
const qty = (n: number): string =>
  n >= 1000 ? Math.round(n).toLocaleString('en-US') : n >= 1 ? n.toFixed(2) : n.toPrecision(3);

/** Figure 6: each stack's itemised month, its alternatives, then the per-job fixed cost and the targets. */
export function printBill(figure: BillFigure, perMillion: { total: number; reconciler: number }): void {
  for (const { bill, assumptions, alternatives } of figure.stacks) {
    table(
      `Figure 6. The monthly bill: ${bill.workload} (${assumptions})`,
      ['group', 'item', 'quantity a month', 'unit', '$ a month'],
      [
        ...bill.lines.map((l) => [l.group, l.item, qty(l.quantity), l.unit, usd(l.usd)]),
        ['total', '', '', '', usd(bill.total)],
      ],
      [11, 58, 18, 16, 11],
    );
    table(
      '  the same workload elsewhere (models)',
      ['alternative', '$ a month', 'assumptions'],
      alternatives.map((a) => [a.name, usd(a.usd), a.assumptions]),
      [28, 11, 80],
    );
  }
  const hundred = figure.stacks[1]?.bill.total ?? Number.NaN;
  const tenDaily = figure.stacks[0]?.bill.total ?? Number.NaN;
  table(
    'Figure 6b. Against the targets (issue 37)',
    ['figure', 'measured', 'target', 'met'],
    [
      [
        'per-job fixed cost, an hourly job joining a worker',
        `$${usd(figure.perJobFixed.joinsWorker)}`,
        `≤ $${TARGETS.perJobFixedUsdMonth}`,
        met(figure.perJobFixed.joinsWorker <= TARGETS.perJobFixedUsdMonth),
      ],
      ['per-job fixed cost, an hourly job with its own worker', `$${usd(figure.perJobFixed.ownWorker)}`, '-', '-'],
      [
        'the 100-hourly-job stack, a month',
        `$${usd(hundred)}`,
        `≤ $${TARGETS.hundredHourlyUsdMonth}`,
        met(hundred <= TARGETS.hundredHourlyUsdMonth),
      ],
      [
        '10 daily jobs with their own entries, a month',
        `$${usd(tenDaily)}`,
        `≤ $${TARGETS.tenDailyUsdMonth}`,
        met(tenDaily <= TARGETS.tenDailyUsdMonth),
      ],
      [
        '$ per million occurrences, all in (reconciler, storage and backup, Lambda time from measured CPU)',
        `$${perMillion.total.toFixed(2)} (reconciler $${perMillion.reconciler.toFixed(2)})`,
        `≤ $${TARGETS.usdPerMillionAllIn}`,
        met(perMillion.total <= TARGETS.usdPerMillionAllIn),
      ],
    ],
  );
}

const met = (yes: boolean) => (yes ? 'yes' : 'no');

/** The deployed reconciler over a seeded window of finished occurrences. */
export function printDeployedReconciler(r: DeployedReconcilerFigures): void {
  const units = (run: DeployedReconcilerFigures['idle']) => run.capacity.indexReadUnits + run.capacity.tableReadUnits;
  table(
    `The reconciler at its deployed settings (rows seeded over ${(r.seededSpanSeconds / 3600).toFixed(0)} h, unannounced after ${r.thresholds.unannouncedAfterSeconds} s, a run every ${r.everyMinutes} min)`,
    ['table', 'requests a run', 'RRU a run', 'index entries read', 'live heap at most'],
    [
      [
        'one recent finished occurrence',
        list(r.idle.requests),
        units(r.idle),
        r.idle.examined,
        `${(r.idle.peakHeapBytes / 1024).toFixed(0)} KB`,
      ],
      [
        `${r.seededRows.toLocaleString('en-US')} finished rows (100 hourly jobs over ${(r.seededSpanSeconds / 3600).toFixed(0)} h)`,
        list(r.seeded.requests),
        units(r.seeded),
        r.seeded.examined,
        `${(r.seeded.peakHeapBytes / 1024).toFixed(0)} KB`,
      ],
    ],
  );
  console.log(
    `each finished occurrence: read by ${r.runsPerOccurrence.toFixed(0)} runs, ${r.readUnitsPerOccurrence.toFixed(2)} RRU over its life; about ${r.heapBytesPerEntry.toFixed(0)} bytes of heap per entry a run holds`,
  );
}
