/**
 * The reconciler at the settings the stack deploys (functions/protocol/worker-limits.ts reconcileThresholds of a
 * default job), over a table that holds a realistic window of finished occurrences: what each run reads, and what
 * each occurrence costs in read units over all the runs that see it. The rows are seeded as the protocol leaves them:
 * one occurrence is run to the end by the real handlers, and its final row is copied to other jobs and scheduled
 * times (keys, times and the index key moved with it), so a change of what the protocol writes is measured as is.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BatchWriteItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { withDefaults } from '../functions/protocol/job-settings';
import { OCCURRENCE_TABLE, shardOf, tableKeyOf } from '../functions/protocol/table-schema';
import {
  RECONCILE_EVERY_MINUTES,
  reconcileThresholds,
  stuckAfterSeconds,
  workerLimits,
} from '../functions/protocol/worker-limits';
import { createReconcilerHandler } from '../functions/reconciler';
import type { BenchSession } from './bench-session';
import { type CapacityTotals, sumCapacity } from './capacity-ledger';
import type { WireItem } from './item-size';
import {
  BenchPathError,
  benchJob,
  benchSettings,
  countRequests,
  localReconcileWorkers,
  type OperationCounts,
  scheduledTimes,
} from './paths';

/** The seeded stack: 100 hourly jobs (the second stack), one finished occurrence per job and hour. */
export const SEEDED_JOBS = 100;
export const SEEDED_EVERY_SECONDS = 3_600;
/**
 * How far back the seeded rows reach: 55 hours, the look-back the reconciler deployed before issue 24 (a 5-minute
 * job's longest run, 25 h before a report counts as unannounced, and a day). A reconciler that reads finished rows is
 * charged for every row of that window; one that leaves them alone is charged nothing.
 */
export const SEEDED_SPAN_SECONDS = 198_300;
/** Job ids of one length, so a copy of the template row is the same size as the row itself. */
const jobIdOf = (i: number) => `seed-job-${String(i).padStart(3, '0')}`;
const TEMPLATE_JOB = jobIdOf(0);
const BATCH_WRITE_MAX = 25;

export interface ReconcilerRun {
  readonly requests: OperationCounts;
  readonly capacity: CapacityTotals;
  /** Index entries the run read (its report's `examined`). */
  readonly examined: number;
  readonly ms: number;
  /** The most the heap grew above its level before the run, sampled while it ran (bytes). */
  readonly peakHeapBytes: number;
}

export interface DeployedReconcilerFigures {
  readonly thresholds: ReturnType<typeof reconcileThresholds>;
  readonly everyMinutes: number;
  readonly seededRows: number;
  /** Seconds of scheduled time the seeded rows span (back from the hour before now). */
  readonly seededSpanSeconds: number;
  /** A run over the table with only the template occurrence (recent, out of every window). */
  readonly idle: ReconcilerRun;
  /** A run over the seeded table. */
  readonly seeded: ReconcilerRun;
  /** Runs that read each finished occurrence: its window divided by the run interval. */
  readonly runsPerOccurrence: number;
  /** Read units each occurrence costs over its life: the seeded run's extra units per row, times the runs. */
  readonly readUnitsPerOccurrence: number;
  /** The seeded run's extra heap per finished row it read (bytes). */
  readonly heapBytesPerEntry: number;
  /** CPU milliseconds of an idle run at a full core (its queries' signing and parsing), measured apart. */
  readonly idleCpuMs?: number;
}

/**
 * Runs the deployed reconciler twice: on a table with one recent finished occurrence, then with `jobs` jobs'
 * hourly finished occurrences seeded over the whole look-back and an hour more.
 */
export async function measureDeployedReconciler(
  session: BenchSession,
  jobs = SEEDED_JOBS,
): Promise<DeployedReconcilerFigures> {
  const deployed = withDefaults({ id: TEMPLATE_JOB });
  const thresholds = reconcileThresholds([deployed]);
  const pipeline = await session.pipeline(benchSettings({}, TEMPLATE_JOB), { [TEMPLATE_JOB]: benchJob(0) }, 1);
  const [templateTime] = scheduledTimes(1);
  const templateKey = { jobId: TEMPLATE_JOB, scheduledTime: templateTime };
  await session.recorder.whilePaused(async () => {
    pipeline.start();
    await pipeline.fire([templateKey]);
    const [row] = await pipeline.waitUntilSettled([templateKey], 60_000);
    await pipeline.stop();
    if (row?.notifiedAt === undefined) throw new BenchPathError('the template occurrence did not settle');
  });
  const table = pipeline.resources.tableName;
  const template = await session.recorder.whilePaused(async () => {
    const got = await pipeline.clients.dynamo.send(
      new GetItemCommand({ TableName: table, Key: wireKey(templateKey), ConsistentRead: true }),
    );
    return got.Item as WireItem;
  });
  const reconciler = session.timed(
    'reconciler',
    createReconcilerHandler({
      workers: localReconcileWorkers(pipeline.resources.jobQueueUrl, stuckAfterSeconds(workerLimits([deployed]))),
      thresholds,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    }),
  );
  session.clear();
  const idle = await measuredRun(session, reconciler);
  const idleCpuMs = await cpuOfRun(session, reconciler);

  const spanSeconds = SEEDED_SPAN_SECONDS + SEEDED_EVERY_SECONDS;
  const rows = seedRows(template, templateKey, jobs, spanSeconds);
  await session.recorder.whilePaused(async () => {
    for (let i = 0; i < rows.length; i += BATCH_WRITE_MAX) {
      const batch = rows.slice(i, i + BATCH_WRITE_MAX).map((Item) => ({ PutRequest: { Item } }));
      const out = await pipeline.clients.dynamo.send(
        new BatchWriteItemCommand({ RequestItems: { [table]: batch as never } }),
      );
      if (Object.keys(out.UnprocessedItems ?? {}).length > 0) throw new BenchPathError('moto left items unwritten');
    }
  });
  session.clear();
  const seeded = await measuredRun(session, reconciler);
  session.clear();
  return {
    ...deployedFigures({ thresholds, seededRows: rows.length, seededSpanSeconds: spanSeconds, idle, seeded }),
    idleCpuMs,
  };
}

/**
 * The CPU of one idle run, apart from the measured run: that one's heap sampling runs a full collection every
 * HEAP_SAMPLE_MS, which is not the reconciler's work.
 */
async function cpuOfRun(session: BenchSession, reconciler: () => Promise<unknown>): Promise<number> {
  session.clear();
  await reconciler();
  const cpuMs = session.timings.at(-1)?.cpuMs ?? 0;
  session.clear();
  return cpuMs;
}

/** The per-occurrence figures from the two runs (pure: tested with hand-made runs). */
export function deployedFigures(m: {
  thresholds: DeployedReconcilerFigures['thresholds'];
  seededRows: number;
  seededSpanSeconds: number;
  idle: ReconcilerRun;
  seeded: ReconcilerRun;
}): DeployedReconcilerFigures {
  const everySeconds = RECONCILE_EVERY_MINUTES * 60;
  const readUnits = (c: CapacityTotals) => c.tableReadUnits + c.indexReadUnits;
  // Rows are spread evenly over the span: a run reads a share examined/rows of them, and each row is read by every
  // run while it is in the window, i.e. (examined/rows × span) / interval runs.
  const extraEntries = Math.max(0, m.seeded.examined - m.idle.examined);
  const runsPerOccurrence = ((extraEntries / m.seededRows) * m.seededSpanSeconds) / everySeconds;
  const extraUnits = Math.max(0, readUnits(m.seeded.capacity) - readUnits(m.idle.capacity));
  const occurrencesPerRun = (m.seededRows / m.seededSpanSeconds) * everySeconds;
  return {
    ...m,
    everyMinutes: RECONCILE_EVERY_MINUTES,
    runsPerOccurrence,
    readUnitsPerOccurrence: extraUnits / occurrencesPerRun,
    heapBytesPerEntry:
      extraEntries === 0 ? 0 : Math.max(0, m.seeded.peakHeapBytes - m.idle.peakHeapBytes) / extraEntries,
  };
}

async function measuredRun(
  session: BenchSession,
  reconciler: () => Promise<{ examined: number }>,
): Promise<ReconcilerRun> {
  const started = performance.now();
  const { result: report, peakBytes } = await peakHeapDuring(reconciler);
  const ms = performance.now() - started;
  const requests = countRequests(session.recorder.take()).requests.handler;
  return {
    requests,
    capacity: sumCapacity(session.ledger.take()),
    examined: report.examined,
    ms,
    peakHeapBytes: peakBytes,
  };
}

/** Copies of the finished template row: `jobs` jobs, one every SEEDED_EVERY_SECONDS, over `spanSeconds` before now. */
export function seedRows(
  template: WireItem,
  templateKey: { jobId: string; scheduledTime: string },
  jobs: number,
  spanSeconds: number,
): WireItem[] {
  const newest =
    Math.floor(Date.parse(templateKey.scheduledTime) / 3_600_000) * 3_600_000 - SEEDED_EVERY_SECONDS * 1000;
  const slots = Math.floor(spanSeconds / SEEDED_EVERY_SECONDS);
  const rows: WireItem[] = [];
  for (let s = 0; s < slots; s++) {
    const scheduledTime = new Date(newest - s * SEEDED_EVERY_SECONDS * 1000).toISOString().replace('.000Z', 'Z');
    for (let j = 1; j <= jobs; j++) rows.push(movedRow(template, templateKey, { jobId: jobIdOf(j), scheduledTime }));
  }
  return rows;
}

/**
 * The template row moved to another key: its job id replaced everywhere (keys, report key), every time in it shifted
 * by the difference of the scheduled times (ISO strings and epoch seconds such as the TTL), and its index key, if it
 * has one, moved to the new key's shard.
 */
export function movedRow(
  template: WireItem,
  from: { jobId: string; scheduledTime: string },
  to: { jobId: string; scheduledTime: string },
): WireItem {
  const shiftMs = Date.parse(to.scheduledTime) - Date.parse(from.scheduledTime);
  const text = JSON.stringify(template)
    .replaceAll(from.jobId, to.jobId)
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z/g, (iso, millis: string | undefined) => {
      const moved = new Date(Date.parse(iso) + shiftMs).toISOString();
      return millis === undefined ? moved.replace(/\.\d{3}Z$/, 'Z') : moved;
    })
    .replace(/"N":"(\d{10})"/g, (_all, seconds: string) => `"N":"${Number(seconds) + Math.round(shiftMs / 1000)}"`);
  const row = JSON.parse(text) as WireItem;
  const indexKey = OCCURRENCE_TABLE.statusIndex.partitionKey;
  const shard = row[indexKey];
  if (shard !== undefined && 'S' in shard) {
    const prefix = shard.S.slice(0, shard.S.lastIndexOf('#') + 1);
    row[indexKey] = { S: `${prefix}${shardOf(to)}` };
  }
  return row;
}

function wireKey(key: { jobId: string; scheduledTime: string }): Record<string, { S: string }> {
  return Object.fromEntries(Object.entries(tableKeyOf(key)).map(([k, v]) => [k, { S: String(v) }]));
}

/** How often the heap is collected and sampled while a run goes on. */
const HEAP_SAMPLE_MS = 500;

/**
 * What `work` holds: the live heap (after a full collection, so the answers' parsing garbage is not counted) at its
 * highest while it runs, above its level before, sampled every HEAP_SAMPLE_MS.
 */
async function peakHeapDuring<T>(work: () => Promise<T>): Promise<{ result: T; peakBytes: number }> {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const live = () => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  const base = live();
  let peak = base;
  const sample = setInterval(() => {
    peak = Math.max(peak, live());
  }, HEAP_SAMPLE_MS);
  try {
    const result = await work();
    return { result, peakBytes: peak - base };
  } finally {
    clearInterval(sample);
  }
}
