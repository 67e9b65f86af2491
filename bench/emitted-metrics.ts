/**
 * What the functions write as deployed: one happy-path occurrence and one idle reconciler run with the handlers'
 * own Powertools logger and metrics (no logger or metrics given, as in Lambda), their stdout captured. The EMF lines
 * give the custom metrics (each metric name with each dimension set and its values is one metric to CloudWatch); all
 * lines give the bytes CloudWatch Logs ingests. Whatever the handlers emit, by default, is what is counted.
 */

import { withDefaults } from '../functions/protocol/job-settings';
import { MetricName } from '../functions/protocol/metric-names';
import { reconcileThresholds, stuckAfterSeconds, workerLimits } from '../functions/protocol/worker-limits';
import { createReconcilerHandler } from '../functions/reconciler';
import type { BenchSession } from './bench-session';
import type { MetricSeriesCounts } from './monthly-bill';
import { BENCH_JOB_ID, BenchPathError, benchJob, benchSettings, localReconcileWorkers, scheduledTimes } from './paths';
import { currentHandler } from './request-recorder';

/** One line a handler wrote to stdout. */
export interface WrittenLine {
  readonly handler: string;
  readonly text: string;
}

/** One custom metric as CloudWatch counts it: namespace, name, and a dimension set with its values. */
export interface MetricSeries {
  readonly handler: string;
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Readonly<Record<string, string>>;
}

export interface DeployedRuntimeFigures {
  readonly series: readonly MetricSeries[];
  readonly counts: MetricSeriesCounts;
  /** Bytes to CloudWatch Logs per occurrence (log and EMF lines of the trigger, worker and notifier). */
  readonly logBytesPerOccurrence: number;
  readonly logLinesPerOccurrence: number;
  /** INFO lines of one happy-path occurrence, by message. */
  readonly infoLines: readonly string[];
  readonly reconcilerLogBytesPerRun: number;
}

/** The namespace the stack gives the functions (POWERTOOLS_METRICS_NAMESPACE); its name does not change the count. */
const NAMESPACE = 'ScheduledJobs';

export async function measureDeployedRuntime(session: BenchSession): Promise<DeployedRuntimeFigures> {
  const previous = process.env.POWERTOOLS_METRICS_NAMESPACE;
  process.env.POWERTOOLS_METRICS_NAMESPACE = NAMESPACE;
  try {
    return await deployedRun(session);
  } finally {
    if (previous === undefined) delete process.env.POWERTOOLS_METRICS_NAMESPACE;
    else process.env.POWERTOOLS_METRICS_NAMESPACE = previous;
  }
}

async function deployedRun(session: BenchSession): Promise<DeployedRuntimeFigures> {
  const settings = benchSettings();
  const pipeline = await session.pipeline(settings, { [BENCH_JOB_ID]: benchJob(0) }, 1, 'deployed');
  // A warm-up occurrence first: the figures are those of a warm function (cold starts are priced apart).
  const [warm, measured] = [scheduledTimes(1, 10), scheduledTimes(1)].map(([t]) => ({
    jobId: BENCH_JOB_ID,
    scheduledTime: t,
  }));
  pipeline.start();
  // The warm-up's lines are captured too, and dropped (they would go to the bench's own output).
  await captureStdout(async () => {
    await pipeline.fire([warm]);
    await pipeline.waitUntilSettled([warm], 60_000);
    await quiet();
  });
  const occurrenceLines = await captureStdout(async () => {
    await pipeline.fire([measured]);
    const [row] = await pipeline.waitUntilSettled([measured], 60_000);
    if (row?.notifiedAt === undefined) throw new BenchPathError('the deployed-runtime occurrence did not settle');
    await quiet();
  });
  await pipeline.stop();
  const deployed = withDefaults({ id: BENCH_JOB_ID });
  const reconciler = session.timed(
    'reconciler',
    createReconcilerHandler({
      workers: localReconcileWorkers(pipeline.resources.jobQueueUrl, stuckAfterSeconds(workerLimits([deployed]))),
      thresholds: reconcileThresholds([deployed]),
      schedules: false,
    }),
  );
  const reconcilerLines = await captureStdout(async () => void (await reconciler()));
  session.clear();
  const figures = deployedRuntimeFigures(occurrenceLines, reconcilerLines);
  const undeclared = undeclaredMetrics(figures.series);
  if (undeclared.length > 0)
    throw new BenchPathError(
      `the functions emitted metrics functions/protocol/metric-names.ts does not declare: ${undeclared.join(', ')}`,
    );
  return figures;
}

/** Names of emitted metrics that MetricName does not declare (the bill prices only what the code says it writes). */
export function undeclaredMetrics(series: readonly MetricSeries[]): string[] {
  const declared = new Set<string>(Object.values(MetricName));
  return [...new Set(series.map((s) => s.name).filter((name) => !declared.has(name)))];
}

/** The handlers log after their last write (the notifier's "report announced" follows `notifiedAt`): let them. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 500));

/** The figures from the captured lines (pure: tested with hand-written lines). */
export function deployedRuntimeFigures(
  occurrence: readonly WrittenLine[],
  reconciler: readonly WrittenLine[],
): DeployedRuntimeFigures {
  const series = metricSeries([...occurrence, ...reconciler]);
  const bytes = (lines: readonly WrittenLine[]) => lines.reduce((s, l) => s + Buffer.byteLength(l.text) + 1, 0);
  const info = occurrence
    .map((l) => parsed(l.text))
    .filter((o): o is Record<string, unknown> => o?.level === 'INFO')
    .map((o) => String(o.message));
  return {
    series,
    counts: countSeries(series),
    logBytesPerOccurrence: bytes(occurrence),
    logLinesPerOccurrence: occurrence.length,
    infoLines: info,
    reconcilerLogBytesPerRun: bytes(reconciler),
  };
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

interface EmfDirective {
  readonly Namespace: string;
  readonly Dimensions: readonly (readonly string[])[];
  readonly Metrics: readonly { readonly Name: string }[];
}

/** Every distinct metric in the EMF lines: each name of a directive with each of its dimension sets. */
export function metricSeries(lines: readonly WrittenLine[]): MetricSeries[] {
  const seen = new Map<string, MetricSeries>();
  for (const line of lines) {
    const o = parsed(line.text);
    const directives = (o?._aws as { CloudWatchMetrics?: EmfDirective[] } | undefined)?.CloudWatchMetrics;
    if (o === undefined || directives === undefined) continue;
    for (const d of directives)
      for (const set of d.Dimensions.length === 0 ? [[]] : d.Dimensions)
        for (const m of d.Metrics) {
          const dimensions = Object.fromEntries(set.map((name) => [name, String(o[name])]));
          const s = { handler: line.handler, namespace: d.Namespace, name: m.Name, dimensions };
          seen.set(JSON.stringify([s.namespace, s.name, Object.entries(dimensions).sort()]), s);
        }
  }
  return [...seen.values()];
}

/** By what multiplies them: a job's, a worker's, the stack's from occurrences, the reconciler's every run. */
export function countSeries(series: readonly MetricSeries[]): MetricSeriesCounts {
  const of = (pick: (s: MetricSeries) => boolean) => series.filter(pick).length;
  const names = (s: MetricSeries) => Object.keys(s.dimensions);
  return {
    perJob: of((s) => names(s).includes('jobId')),
    perWorker: of((s) => !names(s).includes('jobId') && names(s).includes('worker')),
    perStack: of((s) => !names(s).some((n) => n === 'jobId' || n === 'worker') && s.handler !== 'reconciler'),
    reconcilerIdle: of((s) => !names(s).some((n) => n === 'jobId' || n === 'worker') && s.handler === 'reconciler'),
  };
}

/** The lines written to stdout while `work` runs, each with the handler whose invocation wrote it. */
async function captureStdout(work: () => Promise<void>): Promise<WrittenLine[]> {
  const lines: WrittenLine[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const handler = currentHandler.getStore();
    if (handler === undefined) return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    for (const t of text.split('\n')) if (t.trim() !== '') lines.push({ handler, text: t });
    return true;
  }) as typeof process.stdout.write;
  try {
    await work();
  } finally {
    process.stdout.write = write;
  }
  return lines;
}
