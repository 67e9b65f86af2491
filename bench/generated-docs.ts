/**
 * docs/benchmarks.md's bill and per-million tables, generated from bench/results.json: `npm run bench` rewrites the
 * marked regions after writing the results, `npm run bench:docs` rewrites them from the committed results, and
 * test/bench/generated-docs.test.ts fails when the committed page differs from what the results generate.
 * A region is the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const BENCHMARKS_DOC = path.join(__dirname, '..', 'docs', 'benchmarks.md');
export const RESULTS_FILE = path.join(__dirname, 'results.json');

interface Line {
  readonly group: string;
  readonly item: string;
  readonly quantity: number;
  readonly unit: string;
  readonly usd: number;
}
interface StackBill {
  readonly bill: { readonly workload: string; readonly lines: readonly Line[]; readonly total: number };
  readonly assumptions: string;
  readonly alternatives: readonly { readonly name: string; readonly usd: number }[];
}
interface CostLine {
  readonly item: string;
  readonly quantity: number;
  readonly unit: string;
  readonly usdPerMillion: number;
}
interface LambdaUse {
  readonly fn: string;
  readonly ms: number;
  readonly cpuMs?: number;
  readonly motoMs?: number;
  readonly requests?: number;
}

/** The part of results.json the generated regions read. */
export interface GeneratedInputs {
  readonly machine: { readonly date: string; readonly cores: number; readonly node: string };
  readonly benchSeconds?: number;
  readonly cost: {
    readonly usage: { readonly lambda: readonly LambdaUse[] };
    readonly lines: readonly CostLine[];
    readonly totalPerMillion: number;
    readonly lambdaTimeModel?: string;
    readonly alternatives: readonly { readonly name: string; readonly usdPerMillion: number; readonly how: string }[];
  };
  readonly bill: {
    readonly stacks: readonly StackBill[];
    readonly templates: Record<string, Record<string, number | boolean>>;
    readonly perJobFixed: { readonly joinsWorker: number; readonly ownWorker: number };
  };
  readonly reconcilerDeployed?: { readonly idleCpuMs?: number };
}

/** Dollars as the tables print them: cents above a dollar, four places below. */
export function usd(x: number): string {
  if (x === 0) return '0';
  return Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(4);
}

/** Counts with thousands separators; quantities under a thousandth (GB per occurrence) in exponent notation. */
export function count(x: number): string {
  if (x !== 0 && Math.abs(x) < 0.001) return x.toExponential(2);
  return x.toLocaleString('en-US', { maximumFractionDigits: 4 });
}

function table(head: readonly string[], rows: readonly (readonly string[])[], align: readonly string[]): string {
  return [`| ${head.join(' | ')} |`, `|${align.join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** A bill line's name without its stack's own numbers: "alarms (65, billed by ...)" is "alarms" in every column. */
export function lineLabel(line: Pick<Line, 'group' | 'item'>): string {
  return `${line.group}: ${line.item.replace(/ \(.*$/, '').replace(/:.*$/, '')}`;
}

const SHORT_NAMES = ['10 daily jobs', '100 hourly jobs, 4 workers', '10,000 daily schedules'];

function billsRegion(r: GeneratedInputs): string {
  const stacks = r.bill.stacks;
  const labels: string[] = [];
  for (const s of stacks) for (const l of s.bill.lines) if (!labels.includes(lineLabel(l))) labels.push(lineLabel(l));
  const cell = (s: StackBill, label: string) => {
    const found = s.bill.lines.filter((l) => lineLabel(l) === label);
    return found.length === 0 ? '-' : usd(found.reduce((sum, l) => sum + l.usd, 0));
  };
  const names = stacks.map((s, i) => SHORT_NAMES[i] ?? s.bill.workload);
  const rows = [
    ...labels.map((label) => [label, ...stacks.map((s) => cell(s, label))]),
    ['**total**', ...stacks.map((s) => `**${usd(s.bill.total)}**`)],
    ...(stacks[0]?.alternatives ?? []).map((a, i) => [
      `beside it: ${a.name}`,
      ...stacks.map((s) => usd(s.alternatives[i]?.usd ?? Number.NaN)),
    ]),
  ];
  return table(['item', ...names], rows, ['---', ...names.map(() => '---:')]);
}

const TEMPLATE_ROWS: readonly [string, string][] = [
  ['functions', 'Lambda functions'],
  ['workers', 'workers (a polled job queue each)'],
  ['queues', 'SQS queues (job queues, dead-letter queues, the announcements)'],
  ['alarms', 'alarms'],
  ['alarmMetrics', 'alarm metrics billed (a metric-math alarm bills each metric it reads)'],
  ['customMetricsAlarmed', 'custom metrics the alarms read'],
  ['schedules', 'Scheduler schedules in the template'],
  ['tables', 'DynamoDB tables'],
  ['indexes', 'global secondary indexes'],
  ['logGroups', 'log groups'],
  ['logRetentionDays', 'log retention, days'],
  ['dashboards', 'dashboards'],
  ['pointInTimeRecovery', 'point-in-time recovery'],
  ['platformLogLines', "Lambda's own START/END/REPORT lines"],
];

function templatesRegion(r: GeneratedInputs): string {
  const stacks = r.bill.stacks.map((s) => r.bill.templates[s.bill.workload] ?? {});
  const show = (v: number | boolean | undefined) =>
    v === undefined ? '-' : typeof v === 'boolean' ? (v ? 'yes' : 'no') : count(v);
  return table(
    ['in the synthesized template', ...SHORT_NAMES.slice(0, stacks.length)],
    TEMPLATE_ROWS.map(([key, what]) => [what, ...stacks.map((t) => show(t[key]))]),
    ['---', ...stacks.map(() => '---:')],
  );
}

function perMillionRegion(r: GeneratedInputs): string {
  const lines = table(
    ['item', 'per occurrence', 'unit', '$ per million'],
    [
      ...r.cost.lines.map((l) => [l.item, count(l.quantity), l.unit, usd(l.usdPerMillion)]),
      ['**all in**', '', '', `**${usd(r.cost.totalPerMillion)}**`],
    ],
    ['---', '---:', '---', '---:'],
  );
  const lambda = table(
    ['function', 'CPU ms at a full core', 'requests in turn', 'modelled billed ms', 'ms on moto (not used)'],
    r.cost.usage.lambda.map((l) => [
      l.fn,
      l.cpuMs === undefined ? '-' : l.cpuMs.toFixed(1),
      l.requests === undefined ? '-' : count(l.requests),
      l.ms.toFixed(0),
      l.motoMs === undefined ? '-' : l.motoMs.toFixed(0),
    ]),
    ['---', '---:', '---:', '---:', '---:'],
  );
  const reconciler = r.reconcilerDeployed?.idleCpuMs;
  const alternatives = table(
    ['alternative', '$ per million', 'how it is counted'],
    r.cost.alternatives.map((a) => [a.name, usd(a.usdPerMillion), a.how]),
    ['---', '---:', '---'],
  );
  return [
    lines,
    '',
    r.cost.lambdaTimeModel ?? '',
    '',
    lambda,
    '',
    reconciler === undefined
      ? ''
      : `The reconciler's idle run (every 5 minutes, whatever the traffic): ${reconciler.toFixed(0)} ms of CPU at a full core, in the monthly bill.`,
    '',
    alternatives,
  ]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
}

function provenanceRegion(r: GeneratedInputs): string {
  const seconds = r.benchSeconds === undefined ? '' : `, ${Math.round(r.benchSeconds)} s`;
  return `Generated from \`bench/results.json\` (\`npm run bench\` of ${r.machine.date.slice(0, 10)} on ${r.machine.cores} cores, Node ${r.machine.node}${seconds}) by \`npm run bench:docs\`; edit the generator (\`bench/generated-docs.ts\`), not these tables.`;
}

/** Every generated region, by name. */
export function generatedRegions(r: GeneratedInputs): Record<string, string> {
  return {
    'bench-provenance': provenanceRegion(r),
    'per-million': perMillionRegion(r),
    'bill-templates': templatesRegion(r),
    bills: billsRegion(r),
  };
}

export class GeneratedRegionError extends Error {
  override readonly name = 'GeneratedRegionError';
}

/** The page with each region's text replaced; a region named but missing in the page is an error. */
export function withRegions(page: string, regions: Record<string, string>): string {
  let out = page;
  for (const [name, text] of Object.entries(regions)) {
    const begin = `<!-- generated:${name} -->`;
    const end = `<!-- /generated:${name} -->`;
    const from = out.indexOf(begin);
    const to = out.indexOf(end);
    if (from < 0 || to < from)
      throw new GeneratedRegionError(`${path.basename(BENCHMARKS_DOC)} has no region "${begin}" ... "${end}"`);
    out = `${out.slice(0, from + begin.length)}\n${text}\n${out.slice(to)}`;
  }
  return out;
}

export function readResults(file = RESULTS_FILE): GeneratedInputs {
  return JSON.parse(readFileSync(file, 'utf8')) as GeneratedInputs;
}

/** Rewrites the page's regions from the results; returns whether the page changed. */
export function writeGeneratedDocs(results: GeneratedInputs, doc = BENCHMARKS_DOC): boolean {
  const page = readFileSync(doc, 'utf8');
  const next = withRegions(page, generatedRegions(results));
  if (next !== page) writeFileSync(doc, next);
  return next !== page;
}

if (require.main === module) {
  const changed = writeGeneratedDocs(readResults());
  console.log(`${path.relative(process.cwd(), BENCHMARKS_DOC)} ${changed ? 'rewritten' : 'already up to date'}`);
}
