/**
 * Figure 5, measured part: N occurrences of one tick fired at once against moto, several pollers working them off.
 * One tick means one scheduled time: the N occurrences are N jobs (tenants) due at the same minute, which is also
 * what puts them all in one partition of the byStatus index.
 * Requests per occurrence must not depend on N; the wall time is mostly moto's (and the emulator lock's, which
 * makes every DynamoDB and S3 request of the process wait for the one before it), so it is reported with the share
 * of it during which a handler's request was waiting for moto.
 */
import type { BenchSession } from './bench-session';
import { BENCH_JOB_ID, BenchPathError, benchJob, benchSettings, countRequests, scheduledTimes, total } from './paths';
import type { RecordedRequest } from './request-recorder';

export interface TickResult {
  readonly occurrences: number;
  readonly pollers: number;
  /** "Service.Operation" → requests per occurrence, the handlers' only. */
  readonly handlerPerOccurrence: Record<string, number>;
  readonly handlerRequestsPerOccurrence: number;
  /**
   * The notifier's reads of the row (GetItem) per occurrence: the share of occurrences whose stream image it did not
   * trust (older than its freshness window when the record arrived), each read once.
   */
  readonly notifierRowReadsPerOccurrence: number;
  /** The notifier's row reads per announcement (SNS Publish): the share of announced occurrences it re-read. */
  readonly notifierRowReadShare: number;
  /** Requests per occurrence by the handler that made them. */
  readonly byHandlerPerOccurrence: Record<string, number>;
  /** The SQS event source's non-empty receives and its deletes, per occurrence (batches make them fall below 1). */
  readonly eventSourcePerOccurrence: number;
  readonly wallMs: number;
  /** Share of the wall time in which at least one handler request was waiting for moto's answer. */
  readonly motoShare: number;
  readonly unsettled: number;
  /** The handlers' WARN and ERROR lines by message: a lease given up under the emulator's delays shows here. */
  readonly warnings: Record<string, number>;
}

/**
 * A longer lease than the paths use: N requests queue behind the emulator lock, and with a 10 s lease a claimed
 * occurrence could wait past its safety margin and be released, which is the emulator's slowness, not the protocol's.
 * A retry deadline of a default job's day: with the paths' 600 s, the last of 1,000 occurrences still queued on moto
 * after ten minutes were recorded FAILED at their claim (580 of 1,000 in one run), and the tick ended unsettled.
 */
export const TICK_SETTINGS = { leaseSeconds: 60, heartbeatSeconds: 10, retryDeadlineSeconds: 86_400 } as const;

const QUIET_MS = 1_000;

export async function runTick(
  session: BenchSession,
  n: number,
  pollers: number,
  timeoutMs: number,
): Promise<TickResult> {
  const job = benchJob(0);
  const ids = tickJobIds(n);
  const settings = ids.map((id) => benchSettings(TICK_SETTINGS, id));
  const pipeline = await session.pipeline(settings, Object.fromEntries(ids.map((id) => [id, job])), pollers);
  const [scheduledTime] = scheduledTimes(1);
  const keys = ids.map((jobId) => ({ jobId, scheduledTime }));
  const started = performance.now();
  pipeline.start();
  await pipeline.fire(keys);
  // The table is not polled while the tick runs: N reads every 250 ms would queue behind the handlers' requests.
  await waitForAnnouncements(session, n, started + timeoutMs);
  const wallMs = performance.now() - started;
  await pipeline.stop();
  const requests = session.recorder.take();
  session.ledger.take();
  const rows = await pipeline.rows(keys);
  const unsettled = rows.filter((r) => r?.notifiedAt === undefined).length;
  if (unsettled === n) throw new BenchPathError(`none of the ${n} occurrences settled within ${timeoutMs} ms`);
  return { ...summarize(requests, n, pollers, wallMs, started, unsettled), warnings: warnings(session.logLines) };
}

export function warnings(lines: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of lines) {
    const parsed = JSON.parse(line) as { level?: string; message?: string };
    if (parsed.level !== 'WARN' && parsed.level !== 'ERROR') continue;
    const key = `${parsed.level} ${parsed.message}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

export function tickJobIds(n: number): string[] {
  const width = String(n).length;
  return Array.from({ length: n }, (_, i) => `${BENCH_JOB_ID}-${String(i + 1).padStart(width, '0')}`);
}

/** Until N announcements (or FAILED occurrences) went out and the handlers then made no request for QUIET_MS (the notifier's last writes). */
async function waitForAnnouncements(session: BenchSession, n: number, deadline: number): Promise<void> {
  const published = () =>
    session.recorder.requests.filter((r) => r.role === 'handler' && r.operation === 'Publish' && r.status === 200)
      .length;
  // A FAILED occurrence is never announced: counted too, so that a tick whose occurrences fail ends early.
  const failed = () => session.logLines.filter((line) => line.includes('"occurrence FAILED"')).length;
  let seen = -1;
  let quietSince = performance.now();
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const count = session.recorder.requests.filter((r) => r.role === 'handler').length;
    if (count !== seen) {
      seen = count;
      quietSince = performance.now();
    } else if (published() + failed() >= n && performance.now() - quietSince >= QUIET_MS) {
      return;
    }
  }
}

function summarize(
  requests: readonly RecordedRequest[],
  n: number,
  pollers: number,
  wallMs: number,
  started: number,
  unsettled: number,
): Omit<TickResult, 'warnings'> {
  const counts = countRequests(requests);
  const handler = counts.requests.handler;
  const perOccurrence = Object.fromEntries(Object.entries(handler).map(([k, v]) => [k, v / n]));
  const sqsSource = total(counts.requests['event-source'], (k) => k.startsWith('SQS.'));
  const handlerRequests = requests.filter((r) => r.role === 'handler');
  const byHandler: Record<string, number> = {};
  for (const r of handlerRequests) {
    const who = r.handler ?? 'unknown';
    byHandler[who] = (byHandler[who] ?? 0) + 1 / n;
  }
  const notifierReads = handlerRequests.filter((r) => r.handler === 'notifier' && r.operation === 'GetItem').length;
  return {
    occurrences: n,
    pollers,
    handlerPerOccurrence: perOccurrence,
    handlerRequestsPerOccurrence: total(handler) / n,
    notifierRowReadsPerOccurrence: notifierReads / n,
    notifierRowReadShare: notifierReads / Math.max(1, handler['SNS.Publish'] ?? 0),
    byHandlerPerOccurrence: byHandler,
    eventSourcePerOccurrence: sqsSource / n,
    wallMs,
    motoShare: busyMs(handlerRequests, started, started + wallMs) / wallMs,
    unsettled,
  };
}

/** The length of the union of the requests' intervals within [from, to]. */
export function busyMs(
  requests: readonly Pick<RecordedRequest, 'startMs' | 'durationMs'>[],
  from: number,
  to: number,
): number {
  const intervals = requests
    .map((r) => [Math.max(from, r.startMs), Math.min(to, r.startMs + r.durationMs)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let busy = 0;
  let end = -Infinity;
  for (const [a, b] of intervals) {
    if (a > end) {
      busy += b - a;
      end = b;
    } else if (b > end) {
      busy += b - end;
      end = b;
    }
  }
  return busy;
}
