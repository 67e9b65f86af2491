/**
 * What the monthly bill reads from the code: the reconciler's per-occurrence figures, the custom metrics in the
 * functions' EMF lines, and the fixed items of a synthesized template.
 */
import { describe, expect, it } from 'vitest';
import {
  countSeries,
  deployedRuntimeFigures,
  metricSeries,
  undeclaredMetrics,
  type WrittenLine,
} from '../../bench/emitted-metrics';
import { deployedFigures, movedRow, type ReconcilerRun } from '../../bench/reconciler-deployed';
import { synthesize, type Template, templateCounts } from '../../bench/stack-template';
import { OCCURRENCE_TABLE, shardOf } from '../../functions/protocol/table-schema';

const run = (over: Partial<ReconcilerRun>): ReconcilerRun => ({
  requests: { 'DynamoDB.Query': 320 },
  capacity: { tableWriteUnits: 0, indexWriteUnits: 0, tableReadUnits: 0, indexReadUnits: 160 },
  examined: 0,
  ms: 1,
  peakHeapBytes: 1000,
  ...over,
});

describe('Function: deployedFigures', () => {
  it("charges each finished occurrence the seeded run's extra read units, over every run that sees it", () => {
    // 1,200 rows over 12 h (100 every hour); the run reads 600 of them (a 6-hour window), 300 RRU more than idle.
    const f = deployedFigures({
      thresholds: { unannouncedAfterSeconds: 1, maxFixesPerRun: 1 },
      seededRows: 1200,
      seededSpanSeconds: 12 * 3600,
      idle: run({}),
      seeded: run({
        examined: 600,
        capacity: { tableWriteUnits: 0, indexWriteUnits: 0, tableReadUnits: 10, indexReadUnits: 450 },
        peakHeapBytes: 1000 + 600 * 500,
      }),
    });
    // A 6-hour window seen every 5 minutes: 72 runs; 300 RRU for the 600 rows in view: 0.5 a row a run.
    expect(f.runsPerOccurrence).toBeCloseTo(72, 9);
    expect(f.readUnitsPerOccurrence).toBeCloseTo(36, 9);
    expect(f.heapBytesPerEntry).toBeCloseTo(500, 9);
  });

  it('charges nothing when the seeded rows are not read (a reconciler that skips finished rows)', () => {
    const f = deployedFigures({
      thresholds: { unannouncedAfterSeconds: 1, maxFixesPerRun: 1 },
      seededRows: 1200,
      seededSpanSeconds: 12 * 3600,
      idle: run({}),
      seeded: run({}),
    });
    expect(f.runsPerOccurrence).toBe(0);
    expect(f.readUnitsPerOccurrence).toBe(0);
    expect(f.heapBytesPerEntry).toBe(0);
  });
});

describe('Function: movedRow', () => {
  const from = { jobId: 'seed-job-000', scheduledTime: '2026-12-01T10:00:00Z' };
  const to = { jobId: 'seed-job-042', scheduledTime: '2026-11-30T08:00:00Z' };
  const shiftMs = Date.parse(to.scheduledTime) - Date.parse(from.scheduledTime);
  const template = {
    jobId: { S: from.jobId },
    scheduledTime: { S: from.scheduledTime },
    [OCCURRENCE_TABLE.statusIndex.partitionKey]: { S: `SUCCEEDED#${shardOf(from)}` },
    succeededAt: { S: '2026-12-01T10:00:01.250Z' },
    reportKey: { S: `reports/${from.jobId}/${from.scheduledTime}.txt` },
    expiresAt: { N: String(Date.parse(from.scheduledTime) / 1000 + 86_400) },
    attempt: { N: '1' },
  };

  it("moves the keys, the times and the index key to the new occurrence's shard, keeping the status", () => {
    const row = movedRow(template, from, to);
    expect(row.jobId).toEqual({ S: to.jobId });
    expect(row.scheduledTime).toEqual({ S: to.scheduledTime });
    expect(row.succeededAt).toEqual({ S: new Date(Date.parse('2026-12-01T10:00:01.250Z') + shiftMs).toISOString() });
    expect(row.reportKey).toEqual({ S: `reports/${to.jobId}/${to.scheduledTime}.txt` });
    expect(row.expiresAt).toEqual({ N: String(Date.parse(to.scheduledTime) / 1000 + 86_400) });
    expect(row.attempt).toEqual({ N: '1' });
    expect(row[OCCURRENCE_TABLE.statusIndex.partitionKey]).toEqual({ S: `SUCCEEDED#${shardOf(to)}` });
  });

  it('leaves a row without an index key out of the index', () => {
    const { [OCCURRENCE_TABLE.statusIndex.partitionKey]: _gone, ...unindexed } = template;
    expect(movedRow(unindexed, from, to)[OCCURRENCE_TABLE.statusIndex.partitionKey]).toBeUndefined();
  });
});

const emf = (
  handler: string,
  dimensions: string[][],
  names: string[],
  values: Record<string, string>,
): WrittenLine => ({
  handler,
  text: JSON.stringify({
    _aws: {
      Timestamp: 0,
      CloudWatchMetrics: [{ Namespace: 'NS', Dimensions: dimensions, Metrics: names.map((Name) => ({ Name })) }],
    },
    ...values,
    ...Object.fromEntries(names.map((n) => [n, 1])),
  }),
});

describe('Function: metricSeries and countSeries', () => {
  it('counts each name with each dimension set once, however often it is emitted, by what multiplies it', () => {
    const started = emf(
      'worker',
      [
        ['service', 'jobId'],
        ['service', 'worker'],
      ],
      ['Started'],
      { service: 's', jobId: 'a', worker: 'w' },
    );
    // The same line twice: a series is counted once however often it is written.
    const lines: WrittenLine[] = [
      started,
      started,
      emf('worker', [['service', 'worker']], ['Succeeded', 'Duration'], { service: 's', worker: 'w' }),
      emf('trigger', [['service', 'component']], ['Recorded'], { service: 's', component: 'trigger' }),
      emf('reconciler', [['service', 'component']], ['Runs'], { service: 's', component: 'reconciler' }),
      { handler: 'worker', text: '{"level":"INFO","message":"claimed occurrence"}' },
    ];
    const series = metricSeries(lines);
    expect(series).toHaveLength(6);
    expect(countSeries(series)).toEqual({ perJob: 1, perWorker: 3, perStack: 1, reconcilerIdle: 1 });
  });

  it('counts every byte written, EMF lines included, and lists the INFO lines', () => {
    const occurrence: WrittenLine[] = [
      { handler: 'trigger', text: '{"level":"INFO","message":"recorded"}' },
      { handler: 'worker', text: '{"level":"DEBUG","message":"claimed"}' },
      emf('worker', [['service']], ['Started'], { service: 's' }),
    ];
    const f = deployedRuntimeFigures(occurrence, [{ handler: 'reconciler', text: 'x'.repeat(9) }]);
    expect(f.logBytesPerOccurrence).toBe(occurrence.reduce((s, l) => s + l.text.length + 1, 0));
    expect(f.logLinesPerOccurrence).toBe(3);
    expect(f.infoLines).toEqual(['recorded']);
    expect(f.reconcilerLogBytesPerRun).toBe(10);
    expect(f.counts.perStack).toBe(1);
  });
});

describe('Function: undeclaredMetrics', () => {
  it('names each emitted metric that functions/protocol/metric-names.ts does not declare, once', () => {
    const series = (name: string) => ({ handler: 'worker', namespace: 'N', name, dimensions: {} });
    expect(undeclaredMetrics([series('OccurrencesSucceeded'), series('Started'), series('Started')])).toEqual([
      'Started',
    ]);
    expect(undeclaredMetrics([series('OccurrencesLate')])).toEqual([]);
  });
});

describe('Function: templateCounts', () => {
  const fn = (loggingConfig?: object) => ({
    Type: 'AWS::Lambda::Function',
    Properties: loggingConfig ? { LoggingConfig: loggingConfig } : {},
  });
  const mapping = (queue: string) => ({
    Type: 'AWS::Lambda::EventSourceMapping',
    Properties: { EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] } },
  });
  const dimensions = (worker: string) => [{ Name: 'worker', Value: worker }];
  const alarm = (namespace: string, name: string, worker: string) => ({
    Type: 'AWS::CloudWatch::Alarm',
    Properties: { Namespace: namespace, MetricName: name, Dimensions: dimensions(worker) },
  });
  const mathAlarm = (...metrics: [string, string][]) => ({
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      Metrics: [
        { Id: 'expr_1', Expression: 'FILL(m0, 0) + FILL(m1, 0)', ReturnData: true },
        ...metrics.map(([Namespace, MetricName], i) => ({
          Id: `m${i}`,
          MetricStat: { Metric: { Namespace, MetricName, Dimensions: [] }, Period: 300, Stat: 'Sum' },
          ReturnData: false,
        })),
      ],
    },
  });
  const template = (functions: object[]): Template => ({
    Resources: {
      A1: alarm('AWS/Lambda', 'Errors', 'worker-a'),
      A2: alarm('Jobs', 'OccurrencesFailed', 'worker-a'),
      A3: mathAlarm(['Jobs', 'OccurrencesRequeued'], ['Jobs', 'ReportsReannounced']),
      D: { Type: 'AWS::CloudWatch::Dashboard' },
      T: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          GlobalSecondaryIndexes: [{ IndexName: 'byStatusShard' }],
        },
      },
      Q: { Type: 'AWS::SQS::Queue' },
      L1: { Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } },
      L2: { Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 14 } },
      Sch: { Type: 'AWS::Scheduler::Schedule' },
      M1: mapping('JobsWorkerAQueue'),
      M2: mapping('JobsWorkerBQueue'),
      S: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: { EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] } },
      },
      ...Object.fromEntries(functions.map((f, i) => [`F${i}`, f])),
    },
  });

  it('counts alarms by the metrics they read, and each resource the bill prices or shows', () => {
    expect(templateCounts(template([fn()]))).toEqual({
      alarms: 3,
      // One each for the plain alarms, two for the metric-math alarm (its expression bills nothing).
      alarmMetrics: 4,
      // OccurrencesFailed, OccurrencesRequeued, ReportsReannounced: not AWS/Lambda's Errors.
      customMetricsAlarmed: 3,
      functions: 1,
      queues: 1,
      schedules: 1,
      tables: 1,
      indexes: 1,
      logGroups: 2,
      logRetentionDays: 30,
      dashboards: 1,
      workers: 2,
      polledQueues: 2,
      pointInTimeRecovery: true,
      platformLogLines: true,
    });
  });

  it("sees Lambda's own lines off only when every function logs JSON at system level WARN or above", () => {
    const quiet = { LogFormat: 'JSON', SystemLogLevel: 'WARN' };
    expect(templateCounts(template([fn(quiet), fn(quiet)])).platformLogLines).toBe(false);
    expect(
      templateCounts(template([fn(quiet), fn({ LogFormat: 'JSON', SystemLogLevel: 'INFO' })])).platformLogLines,
    ).toBe(true);
  });

  it('reads a stack built through the public API: one polled queue per worker, none more for a job that joins one', () => {
    const shared = templateCounts(
      synthesize({ ownEntryJobs: 2, sharedWorkers: [1], runtimeScheduleJobs: 0, schedule: 'rate(1 hour)' }),
    );
    const joined = templateCounts(
      synthesize({ ownEntryJobs: 2, sharedWorkers: [2], runtimeScheduleJobs: 0, schedule: 'rate(1 hour)' }),
    );
    expect(shared.workers).toBe(3);
    expect(shared.polledQueues).toBe(3);
    expect(joined.polledQueues).toBe(3);
    expect(joined.alarms).toBe(shared.alarms);
    expect(joined.schedules).toBe(shared.schedules + 1);
    expect(shared.pointInTimeRecovery).toBe(true);
    // The reconciler's repairs alarm is metric math over two metrics: one more billed metric than alarms.
    expect(shared.alarmMetrics).toBe(shared.alarms + 1);
  });
});
