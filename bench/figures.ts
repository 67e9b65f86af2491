/**
 * Turns the measured paths into figures 1-3: requests per occurrence and per extra event, capacity units, the
 * item's growth with its attempt history, and the usage one occurrence bills.
 */
import { OCCURRENCE_TABLE } from '../functions/protocol/table-schema';
import { WRITE_UNIT_BYTES, writeUnits } from './capacity';
import { type CapacityTotals, STATUS_INDEX } from './capacity-ledger';
import type { OccurrenceUsage } from './cost-model';
import { itemSize, type WireItem, type WireValue } from './item-size';
import { modelledBilledMs } from './lambda-time';
import { type OperationCounts, type PathResult, total } from './paths';

/** lib/job-function.ts gives every function but the worker 256 MB (a literal there, not an export). */
export const DEFAULT_MEMORY_MB = 256;

/**
 * Modelled, not measured: what a deployed run adds to the log bytes the local run measures. Powertools Logger adds
 * service, sampling_rate and xray_trace_id to each line (the local logger writes level, message, fn and time);
 * Lambda writes START, END and REPORT lines for each invocation; each EMF metric is one JSON line.
 */
export const LOG_MODEL = {
  powertoolsExtraBytesPerLine: 120,
  platformBytesPerInvocation: 330,
  emfBytesPerMetric: 280,
} as const;

export function difference(a: OperationCounts, b: OperationCounts): OperationCounts {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const out: OperationCounts = {};
  for (const k of keys) {
    const d = (a[k] ?? 0) - (b[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

export function scale(counts: OperationCounts, by: number): OperationCounts {
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / by]));
}

export function capacityDifference(a: CapacityTotals, b: CapacityTotals, by = 1): CapacityTotals {
  return {
    tableWriteUnits: (a.tableWriteUnits - b.tableWriteUnits) / by,
    indexWriteUnits: (a.indexWriteUnits - b.indexWriteUnits) / by,
    tableReadUnits: (a.tableReadUnits - b.tableReadUnits) / by,
    indexReadUnits: (a.indexReadUnits - b.indexReadUnits) / by,
  };
}

export interface ItemGrowth {
  readonly attempts: number;
  readonly itemBytes: number;
  /** The final write (complete) of such an item: table and index units. */
  readonly completeWriteUnits: number;
  readonly completeIndexWriteUnits: number;
}

/**
 * The item after its last write, with its history stretched to `attempts` entries by repeating the measured path's
 * own `retry` entry (same error text), so the growth is the real entry's size times the attempts before success.
 */
export function itemGrowth(measured: WireItem, attempts: readonly number[]): ItemGrowth[] {
  const history = measured.history;
  if (history === undefined || !('L' in history)) return [];
  const retry = history.L.find((e) => 'M' in e && (e.M.outcome as { S?: string } | undefined)?.S === 'retry');
  const success = history.L.find((e) => 'M' in e && (e.M.outcome as { S?: string } | undefined)?.S === 'succeeded');
  if (retry === undefined || success === undefined) return [];
  return attempts.map((n) => {
    const entries: WireValue[] = [
      ...Array.from({ length: n - 1 }, (_, i) => withAttempt(retry, i + 1)),
      withAttempt(success, n),
    ];
    const after: WireItem = { ...measured, history: { L: entries }, attempt: { N: String(n) } };
    const before: WireItem = { ...after, history: { L: entries.slice(0, -1) } };
    const units = writeUnits(before, after, true, STATUS_INDEX);
    return {
      attempts: n,
      itemBytes: itemSize(after),
      completeWriteUnits: units.table,
      completeIndexWriteUnits: units.index,
    };
  });
}

function withAttempt(entry: WireValue, attempt: number): WireValue {
  if (!('M' in entry)) return entry;
  return { M: { ...entry.M, attempt: { N: String(attempt) } } };
}

/** How many attempts fit before the item passes one write unit. */
export function attemptsWithinOneWriteUnit(growth: readonly ItemGrowth[]): string {
  const over = growth.find((g) => g.itemBytes > WRITE_UNIT_BYTES);
  return over
    ? `passes 1 KB by attempt ${over.attempts}`
    : `stays within 1 KB up to attempt ${growth.at(-1)?.attempts}`;
}

/** The last item written on a path (the final state of its occurrence). */
export function lastItem(path: PathResult): WireItem | undefined {
  const table = OCCURRENCE_TABLE.partitionKey;
  return [...path.writes].reverse().find((w) => w.after?.[table] !== undefined)?.after;
}

/** Billed milliseconds of one handler on a path: each invocation rounded up to 1 ms, as Lambda bills. */
export function billedMs(path: PathResult, name: string): number {
  return path.timings.filter((t) => t.name === name).reduce((s, t) => s + Math.ceil(t.ms), 0);
}

const HANDLERS = ['trigger', 'worker', 'notifier'] as const;

/** Per handler, the median over runs of the path of `pick` (durations and CPU on moto are noisy). */
function medianPerHandler(
  runs: readonly PathResult[],
  pick: (run: PathResult, name: string) => number,
): Record<string, number> {
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return Object.fromEntries(HANDLERS.map((name) => [name, median(runs.map((r) => pick(r, name)))]));
}

/** Per handler, the median over runs of its billed milliseconds on moto (the worker's without the job). */
export function medianBilledMs(runs: readonly PathResult[]): Record<string, number> {
  return medianPerHandler(runs, (r, name) => billedMs(r, name) - (name === 'worker' ? r.jobMs : 0));
}

/** CPU milliseconds of one handler on a path, summed over its invocations. */
export function cpuMs(path: PathResult, name: string): number {
  return path.timings.filter((t) => t.name === name).reduce((s, t) => s + t.cpuMs, 0);
}

/** Per handler, the median over runs of its CPU milliseconds. */
export function medianCpuMs(runs: readonly PathResult[]): Record<string, number> {
  return medianPerHandler(runs, cpuMs);
}

/** What the cost takes from several runs of one path: each handler's median CPU and moto milliseconds. */
export interface MeasuredMedians {
  readonly cpuMs: Record<string, number>;
  readonly motoMs: Record<string, number>;
}

export function measuredMedians(runs: readonly PathResult[]): MeasuredMedians {
  return { cpuMs: medianCpuMs(runs), motoMs: medianBilledMs(runs) };
}

/**
 * What one occurrence of the happy path bills, from the measured run (per occurrence). Lambda time is modelled
 * (bench/lambda-time.ts) from each handler's CPU and requests; `medians` (several runs' CPU and moto ms) defaults to
 * this run's own.
 */
export function usageOf(path: PathResult, medians: MeasuredMedians = measuredMedians([path])): OccurrenceUsage {
  const n = path.occurrences;
  const h = path.requests.handler;
  const es = path.requests['event-source'];
  const lambda = (fn: string, name: string, invocations: number) => {
    const cpu = medians.cpuMs[name] / n;
    const requests = scale(path.requestsByHandler[name] ?? {}, n);
    return {
      fn,
      invocations,
      ms: modelledBilledMs(cpu, requests, DEFAULT_MEMORY_MB),
      cpuMs: cpu,
      motoMs: Math.max(0, medians.motoMs[name]) / n,
      requests: total(requests),
      memoryMb: DEFAULT_MEMORY_MB,
    };
  };
  const count = (name: string) => path.timings.filter((t) => t.name === name).length;
  const published = h['SNS.Publish'] ?? 0;
  const invocations = count('trigger') + count('worker') + published;
  const logBytes =
    path.logBytes +
    path.logLines * LOG_MODEL.powertoolsExtraBytesPerLine +
    invocations * LOG_MODEL.platformBytesPerInvocation +
    path.metrics * LOG_MODEL.emfBytesPerMetric;
  const sqs = (c: OperationCounts) => Object.entries(c).filter(([k]) => k.startsWith('SQS.'));
  return {
    schedulerInvocations: count('trigger') / n,
    lambda: [
      lambda('trigger', 'trigger', count('trigger') / n),
      // The sample's worker is built from its job's entry, with a worker's default 256 MB (lib/job-worker.ts).
      lambda('worker (without the job)', 'worker', count('worker') / n),
      // Deployed, the event source's filter invokes the notifier only for the change to SUCCEEDED: one per publish.
      lambda('notifier', 'notifier', published / n),
    ],
    dynamoWriteUnits: (path.capacity.tableWriteUnits + path.capacity.indexWriteUnits) / n,
    dynamoReadUnits: (path.capacity.tableReadUnits + path.capacity.indexReadUnits) / n,
    sqsStandardRequests: [...sqs(h), ...sqs(es)].reduce((s, [, v]) => s + v, 0) / n,
    s3Puts: (h['S3.PutObject'] ?? 0) / n,
    s3Gets: ((h['S3.HeadObject'] ?? 0) + (h['S3.GetObject'] ?? 0)) / n,
    snsFifoPublishes: published / n,
    snsPayloadBytes: path.snsPayloadBytes / n,
    logBytes: logBytes / n,
  };
}
