/**
 * Figure 6, the monthly bill: three stacks (10 daily jobs; 100 hourly jobs in 4 workers; 10,000 per-customer daily
 * schedules of one job), itemised, beside the same workload elsewhere, and the per-job fixed cost, each against the
 * issue's targets. The occurrence's figures are this run's measurements; the stacks' fixed items come from their
 * synthesized templates; the workloads' timing (how fires bunch, cold starts) is modelled and said so.
 */
import { atRestPerScheduleMonth, auditRunCost, type OccurrenceUsage } from './cost-model';
import type { DeployedRuntimeFigures } from './emitted-metrics';
import {
  type AlternativeBill,
  alternativeBills,
  type Bill,
  type BillInputs,
  DAYS_PER_MONTH,
  fixedPart,
  HOURS_PER_MONTH,
  monthlyBill,
  type OccurrenceFigures,
  type Workload,
} from './monthly-bill';
import { dollars, type PriceTable } from './prices';
import type { DeployedReconcilerFigures } from './reconciler-deployed';
import { auditRun } from './registry-model';
import { type StackShape, synthesize, templateCounts } from './stack-template';

/** The targets of issue 37 (issue 24's: $0.05 a job, $10 for the 100 hourly jobs, $15 per million). */
export const TARGETS = {
  perJobFixedUsdMonth: 0.05,
  hundredHourlyUsdMonth: 6,
  tenDailyUsdMonth: 5,
  usdPerMillionAllIn: 14,
} as const;

const DAILY = 'cron(0 6 * * ? *)';
const HOURLY = 'rate(1 hour)';
/** The retention of a default job (job-settings.ts withDefaults). */
export const RETENTION_DAYS = 90;
const RECONCILER_RUNS_PER_MONTH = (HOURS_PER_MONTH * 60) / 5;

interface StackCase {
  readonly shape: StackShape;
  readonly workload: Omit<Workload, 'extra'>;
}

/**
 * The three stacks. Cold starts, modelled: an environment idle for an hour or more is gone (Lambda documents no
 * figure; a few to 15 minutes is what is seen), a burst of k fires at one minute starts k triggers, ceil(k / 5)
 * workers per worker (batches of 5), one notifier (one stream shard); the reconciler (every 5 minutes) one cold start
 * an hour. Fires spread over the day keep every function warm but for one cold start an hour each.
 */
export function stackCases(): StackCase[] {
  const dailyFires = DAYS_PER_MONTH;
  const hourly = HOURS_PER_MONTH;
  return [
    {
      shape: { ownEntryJobs: 10, sharedWorkers: [], runtimeScheduleJobs: 0, schedule: DAILY },
      workload: {
        name: '10 daily jobs (each with its own `entry`, so its own worker, as the README writes a job)',
        jobs: 10,
        occurrencesPerMonth: 10 * dailyFires,
        jobHoursWithData: dailyFires,
        workerHoursWithData: dailyFires,
        stackHoursWithData: dailyFires,
        coldStarts: { trigger: 10 * dailyFires, worker: 10 * dailyFires, notifier: dailyFires, reconciler: hourly },
        retentionDays: RETENTION_DAYS,
        assumptions: 'all ten at 06:00; every function cold at each daily fire',
      },
    },
    {
      shape: { ownEntryJobs: 0, sharedWorkers: [25, 25, 25, 25], runtimeScheduleJobs: 0, schedule: HOURLY },
      workload: {
        name: '100 hourly jobs in 4 workers (addWorker, 25 jobs each)',
        jobs: 100,
        occurrencesPerMonth: 100 * hourly,
        jobHoursWithData: hourly,
        workerHoursWithData: hourly,
        stackHoursWithData: hourly,
        coldStarts: { trigger: 100 * hourly, worker: 4 * 5 * hourly, notifier: hourly, reconciler: hourly },
        retentionDays: RETENTION_DAYS,
        assumptions: 'all hundred at the top of each hour; every trigger cold, 5 worker environments per worker',
      },
    },
    {
      shape: { ownEntryJobs: 0, sharedWorkers: [], runtimeScheduleJobs: 1, schedule: HOURLY },
      workload: {
        name: '10,000 per-customer daily schedules of one job (runtimeSchedules, its own entry)',
        jobs: 1,
        occurrencesPerMonth: 10_000 * dailyFires,
        jobHoursWithData: hourly,
        workerHoursWithData: hourly,
        stackHoursWithData: hourly,
        coldStarts: { trigger: hourly, worker: hourly, notifier: hourly, reconciler: hourly },
        retentionDays: RETENTION_DAYS,
        assumptions: 'the customers’ times spread over the day (about 7 fires a minute); schedules without input',
      },
    },
  ];
}

/** The run-time schedules' registry at rest (storage, PITR, the reconciler's audit): the figure of run-time schedules. */
function registryLines(schedules: number, prices: PriceTable) {
  const run = auditRun(schedules, 0);
  const atRest = atRestPerScheduleMonth(0, { run, usdPerRun: auditRunCost(run, prices) }, prices);
  return [
    {
      group: 'Registry',
      item: `${schedules.toLocaleString('en-US')} schedules at rest: rows, PITR, audit (bench/registry-model.ts)`,
      quantity: schedules,
      unit: 'schedule-month',
      usd: schedules * atRest.total,
    },
  ];
}

/** What one occurrence uses, for the bill: figure 3's usage, the deployed reconciler, the deployed runtime's logs. */
export function occurrenceFigures(
  usage: OccurrenceUsage,
  reconciler: DeployedReconcilerFigures,
  runtime: DeployedRuntimeFigures,
  row: { rowBytes: number; indexEntryBytes: number },
): OccurrenceFigures {
  const fnOf = (name: string) => (name.startsWith('worker') ? 'worker' : (name as 'trigger' | 'notifier'));
  return {
    functions: usage.lambda.map((l) => ({
      fn: fnOf(l.fn),
      invocations: l.invocations,
      ms: l.ms,
      memoryMb: l.memoryMb,
    })),
    writeUnits: usage.dynamoWriteUnits,
    readUnits: usage.dynamoReadUnits,
    reconcilerReadUnits: reconciler.readUnitsPerOccurrence,
    sqsRequests: usage.sqsStandardRequests,
    s3Puts: usage.s3Puts,
    s3Gets: usage.s3Gets,
    snsPublishes: usage.snsFifoPublishes,
    snsPayloadBytes: usage.snsPayloadBytes,
    logBytes: runtime.logBytesPerOccurrence,
    ...row,
  };
}

export interface StackBill {
  readonly bill: Bill;
  readonly assumptions: string;
  readonly alternatives: readonly AlternativeBill[];
}

export interface BillFigure {
  readonly stacks: readonly StackBill[];
  /** The fixed part's growth when one more hourly job joins a worker of the 100-job stack, and with its own worker. */
  readonly perJobFixed: { readonly joinsWorker: number; readonly ownWorker: number };
  readonly templates: Record<string, ReturnType<typeof templateCounts>>;
  readonly occurrence: OccurrenceFigures;
}

export function billFigure(
  occurrence: OccurrenceFigures,
  reconciler: DeployedReconcilerFigures,
  runtime: DeployedRuntimeFigures,
  prices: PriceTable,
): BillFigure {
  const inputsFor = (shape: StackShape): BillInputs => ({
    occurrence,
    reconciler: {
      runsPerMonth: RECONCILER_RUNS_PER_MONTH,
      readUnitsPerRun: reconciler.idle.capacity.indexReadUnits + reconciler.idle.capacity.tableReadUnits,
      queriesPerRun: reconciler.idle.requests['DynamoDB.Query'] ?? 0,
      cpuMsPerRun: reconciler.idleCpuMs ?? 0,
      memoryMb: 256,
      logBytesPerRun: runtime.reconcilerLogBytesPerRun,
    },
    template: templateCounts(synthesize(shape)),
    metrics: runtime.counts,
  });
  const templates: BillFigure['templates'] = {};
  const stacks = stackCases().map(({ shape, workload }) => {
    const inputs = inputsFor(shape);
    templates[workload.name] = inputs.template;
    const extra = shape.runtimeScheduleJobs > 0 ? registryLines(10_000, prices) : undefined;
    return {
      bill: monthlyBill({ ...workload, extra }, inputs, prices),
      assumptions: workload.assumptions,
      alternatives: alternativeBills(workload, occurrence, prices),
    };
  });
  const [, hundred] = stackCases();
  const base = fixedPart(monthlyBill(hundred.workload, inputsFor(hundred.shape), prices));
  const plusOne = (shape: StackShape) =>
    fixedPart(monthlyBill({ ...hundred.workload, jobs: hundred.workload.jobs + 1 }, inputsFor(shape), prices)) - base;
  return {
    stacks,
    perJobFixed: {
      joinsWorker: plusOne({ ...hundred.shape, sharedWorkers: [26, 25, 25, 25] }),
      ownWorker: plusOne({ ...hundred.shape, ownEntryJobs: 1 }),
    },
    templates,
    occurrence,
  };
}

/** Dollars per million occurrences of the deployed reconciler's reads of finished rows. */
export function reconcilerUsdPerMillion(reconciler: DeployedReconcilerFigures, prices: PriceTable): number {
  return dollars(prices.dynamoReadRequestUnit, reconciler.readUnitsPerOccurrence) * 1e6;
}
