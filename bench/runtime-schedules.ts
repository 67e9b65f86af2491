/**
 * The figures of run-time schedules (issue 22; docs/benchmarks.md, "Run-time schedules"): the partition model of
 * one job's 100,000 and 1,000,000 keys on one tick, the whole job's pause row, the registry's bulk load and audit,
 * the cost per schedule-month at rest, per occurrence, per upsert and per audit run, and bulk creation on moto.
 * The models are arithmetic (bench/partition-model.ts, bench/registry-model.ts, bench/cost-model.ts); only the bulk
 * creation is measured, and it is given as a ratio to its anchor.
 */
import {
  atRestPerScheduleMonth,
  auditRunCost,
  costPerMillion,
  KEYED_OCCURRENCE_ASSUMPTIONS,
  keyedOccurrenceUsage,
  type MeasuredHappyPath,
  monthlyWeeklyReports,
  totalPerMillion,
  upsertCost,
} from './cost-model';
import {
  formatKeyedOperations,
  formatKeyedPartitionModel,
  formatTable,
  KEYED_TICK_ASSUMPTIONS,
  keyedPartitionModel,
  keyedRowWriteUnits,
  MEASURED_ROW_BYTES,
  pauseReadsPerSecond,
  shardImbalance,
} from './partition-model';
import type { PathResult } from './paths';
import { PRICES } from './prices';
import {
  AUDIT_BUCKETS_PER_RUN,
  auditRun,
  bulkCreateSeconds,
  FIGURE_INPUT_BYTES,
  registryBulkLoad,
  upsertUnits,
} from './registry-model';

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number, digits = 2) => `$${n.toFixed(digits)}`;
const perMillion = (n: number) => usd(n * 1e6);

/**
 * The rates a bulk create is figured at: the bulk upsert's default (DEFAULT_BULK_RATE of operations/bulk-schedules.ts,
 * the drift helper's, 50 a second when this was written), and Scheduler's default CreateSchedule quota, 1,000 a
 * second in the primary Regions per the older quota page, 5,000 per the newer.
 */
export const CREATE_SCHEDULE_RATES = [50, 1_000, 5_000] as const;

/** Every modelled figure, printed; `measured` replaces figure 3's durations and log bytes with this run's own. */
export function runtimeScheduleModels(measured?: MeasuredHappyPath) {
  const a = KEYED_TICK_ASSUMPTIONS;
  const ticks = keyedPartitionModel(a);
  console.log(
    `\nRun-time schedules: ONE job's N keys all due at 00:00, on DynamoDB (modelled; WCU/s at the peak, limit 1,000 ` +
      `per partition). Scheduler ${count(a.schedulerInvocationsPerSecond)} invocations/s, trigger ${a.triggerConcurrency} ` +
      `reserved × ${a.triggerSeconds * 1000} ms, worker ${a.workerConcurrency} reserved × batches of ${a.workerBatchSize}, ` +
      `a ${a.jobSeconds}-s job, ${a.inputBytes}-byte input; rows ${JSON.stringify(keyedRowWriteUnits(a))} WCU a write:`,
  );
  console.log(formatKeyedPartitionModel(ticks));
  const imbalance = { keys100k: shardImbalance(100_000), keys1m: shardImbalance(1_000_000) };
  console.log(
    `The real hash of (series, time) over 64 shards: busiest shard ${imbalance.keys100k.toFixed(3)} × the mean at ` +
      `100,000 keys, ${imbalance.keys1m.toFixed(3)} × at 1,000,000.`,
  );
  for (const load of ticks.filter((t) => t.keys === 100_000)) {
    console.log(`\nEach kind of write, N = 100,000, ${load.spread.label}:`);
    console.log(formatKeyedOperations(load));
  }

  // The peak starts per second at the default quotas and at the raised ones (the first and third rows of each N).
  const startRates = [ticks[0]?.rates.claims ?? 0, ticks[2]?.rates.claims ?? 0];
  const pause = [10, 100, 1_000, 5_000].map((containers) => ({
    containers,
    byStarts: startRates.map((starts) => ({
      starts,
      ...pauseReadsPerSecond(starts, containers, a.pauseCacheSeconds, a.workerBatchSize),
    })),
  }));
  console.log(
    `\nThe whole job's job-state row (one item: it cannot split), read at each start to see whether the job is ` +
      `paused, cached ${a.pauseCacheSeconds} s per warm container, up to ${a.workerBatchSize} reads at each expiry ` +
      '(a batch runs at once; limit 3,000 RCU/s; eventually consistent reads):',
  );
  console.log(
    formatTable(
      ['warm containers', ...startRates.flatMap((s) => [`${count(s)} starts/s: reads/s (RCU/s)`, 'uncached'])],
      pause.map((p) => [
        count(p.containers),
        ...p.byStarts.flatMap((r) => [
          `${r.reads.toFixed(1)} (${r.readUnits.toFixed(1)})`,
          `${count(r.uncachedReads)} (${count(r.uncachedReadUnits)})`,
        ]),
      ]),
    ),
  );

  const rates = [100, 500, 1_000, 5_000];
  const bulk = [0, FIGURE_INPUT_BYTES].flatMap((input) => rates.map((r) => registryBulkLoad(r, input)));
  console.log(
    '\nThe registry table, a bulk upsert of one job (every write of the rows on the partition key jobId; modelled):',
  );
  console.log(
    formatTable(
      [
        'upserts/s',
        'input',
        'jobId key WCU/s',
        'RCU/s',
        'busiest bySyncDue shard',
        'busiest audit bucket',
        'one partition',
      ],
      bulk.map((b) => [
        count(b.upsertsPerSecond),
        `${b.inputBytes} B`,
        count(b.jobKeyWcu),
        count(b.jobKeyRcu),
        count(b.syncShardWcu),
        count(b.auditBucketWcu),
        b.withinOnePartition ? 'within' : `needs ${Math.ceil(b.jobKeyWcu / b.limitWcu)} (split for heat)`,
      ]),
    ),
  );
  const createTimes = [0, FIGURE_INPUT_BYTES].flatMap((input) =>
    CREATE_SCHEDULE_RATES.map((rate) => ({
      rate,
      input,
      split: bulkCreateSeconds(100_000, rate, input, true),
      unsplit: bulkCreateSeconds(100_000, rate, input, false),
    })),
  );
  console.log('\nTime to create 100,000 schedules (modelled):');
  console.log(
    formatTable(
      ['rate', 'input', 'at that rate (key split)', 'within one registry partition'],
      createTimes.map((t) => [`${count(t.rate)}/s`, `${t.input} B`, `${count(t.split)} s`, `${count(t.unsplit)} s`]),
    ),
  );

  const prices = PRICES;
  const occurrence = { ...KEYED_OCCURRENCE_ASSUMPTIONS, ...(measured ? { measured } : {}) };
  const lines = costPerMillion(keyedOccurrenceUsage(occurrence), prices);
  const withoutJob = totalPerMillion(costPerMillion(keyedOccurrenceUsage({ ...occurrence, jobSeconds: 0 }), prices));
  const audits = [100_000, 1_000_000].map((n) => {
    const run = auditRun(n, FIGURE_INPUT_BYTES);
    const usdPerRun = auditRunCost(run, prices);
    return { run, usdPerRun, atRest: atRestPerScheduleMonth(FIGURE_INPUT_BYTES, { run, usdPerRun }, prices) };
  });
  console.log(`\nCost of one occurrence of a keyed schedule, ${a.inputBytes}-byte input, $ per million:`);
  console.log(
    formatTable(
      ['item', 'per occurrence', '$ per million'],
      [
        ...lines
          .filter((l) => l.usdPerMillion > 0)
          .map((l) => [l.item, `${Number(l.quantity.toPrecision(3))} ${l.unit}`, perMillion(l.usdPerMillion / 1e6)]),
        ['total', '', perMillion(totalPerMillion(lines) / 1e6)],
        ["total without the job's own compute", '', perMillion(withoutJob / 1e6)],
      ],
    ),
  );
  console.log(
    `\nThe audit (K = ${AUDIT_BUCKETS_PER_RUN} of 256 buckets a run, every 5 min) and a schedule at rest, ${FIGURE_INPUT_BYTES}-byte inputs:`,
  );
  console.log(
    formatTable(
      [
        'schedules',
        'ListSchedules pages/run',
        'index RCU/run',
        'run time',
        '$ per run',
        '$ per month',
        'full cycle',
        '$ per schedule-month at rest',
      ],
      audits.map(({ run, usdPerRun, atRest }) => [
        count(run.schedules),
        count(run.listPages),
        count(run.queryReadUnits + run.sweepReadUnits),
        `${run.seconds.toFixed(1)} s`,
        usd(usdPerRun, 5),
        usd(usdPerRun * 8_640),
        `${run.fullCycleMinutes} min`,
        `${atRest.total.toExponential(2)} (storage ${atRest.registryStorage.toExponential(2)}, audit ${atRest.audit.toExponential(2)}, Scheduler 0)`,
      ]),
    ),
  );
  const upserts = [0, FIGURE_INPUT_BYTES].map((input) => ({
    input,
    units: upsertUnits(input),
    usd: upsertCost(input, prices),
  }));
  console.log('\nAn upsert of a new or changed schedule (read, put, markSynced; Scheduler calls are not billed):');
  console.log(
    formatTable(
      ['input', 'row bytes', 'WCU (table + bySyncDue + byAuditBucket)', 'RCU', '$ per million upserts'],
      upserts.map((u) => [
        `${u.input} B`,
        String(u.units.rowBytes),
        `${u.units.totalWriteUnits} (${u.units.tableWriteUnits} + ${u.units.syncIndexWriteUnits} + ${u.units.auditIndexWriteUnits})`,
        String(u.units.readUnits),
        perMillion(u.usd),
      ]),
    ),
  );
  const rowBytes = MEASURED_ROW_BYTES.notify + 2 * a.scheduleKeyLength + a.inputBytes + 20;
  const month = monthlyWeeklyReports(
    100_000,
    { withJob: totalPerMillion(lines) / 1e6, withoutJob: withoutJob / 1e6 },
    audits[0]?.atRest ?? atRestPerScheduleMonth(0, { run: auditRun(100_000, 0), usdPerRun: 0 }, prices),
    rowBytes,
    90,
    prices,
  );
  console.log(
    `\n100,000 weekly customer reports a month: ${count(month.occurrencesPerMonth)} occurrences ` +
      `${usd(month.occurrences)} (${usd(month.occurrencesWithoutJob)} without the job's ${occurrence.jobSeconds} s), ` +
      `schedules at rest ${usd(month.atRest)}, occurrence rows kept 90 days ${usd(month.occurrenceStorage)}: ${usd(month.total)}.`,
  );
  return {
    assumptions: a,
    ticks,
    shardImbalance: imbalance,
    pauseReads: pause,
    registryBulk: bulk,
    createTimes,
    occurrenceCost: { lines, totalPerMillion: totalPerMillion(lines), withoutJobPerMillion: withoutJob },
    audits,
    upserts,
    month,
  };
}

/** The measured keyed happy path: its requests and units, and each DynamoDB write with the item's size. */
export function formatKeyedPath(path: PathResult): string {
  const requests = Object.entries(path.requests.handler)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const total = Object.values(path.requests.handler).reduce((a, b) => a + b, 0);
  const c = path.capacity;
  const writes = path.writes
    .filter((w) => w.tableWriteUnits > 0)
    .map((w) => `${w.operation} ${w.itemBytes ?? '-'} B: ${w.tableWriteUnits} + ${w.indexWriteUnits}`)
    .join('; ');
  return [
    `${total} requests: ${requests}`,
    `table ${c.tableWriteUnits} WRU + index ${c.indexWriteUnits} WRU, ${c.tableReadUnits + c.indexReadUnits} RRU`,
    `each write (item bytes: table + index WRU): ${writes}`,
  ].join('\n');
}
