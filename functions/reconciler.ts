/**
 * Reconciler Lambda: invoked every few minutes by an EventBridge rule. Re-enqueues occurrences that fell through
 * the cracks and announces reports that were never announced (protocol/reconcile.ts).
 *
 * It throws when some of the run's reads or writes failed, after doing everything else it could: the failed
 * invocation shows in the function's Errors metric (alarmed), and the next run retries. Everything it does is
 * conditional, so an overlapping or repeated run is harmless.
 */
import { SnsAnnouncer } from './aws/announcer';
import { documentClient, snsClient, sqsClient } from './aws/clients';
import { DynamoOccurrenceReader } from './aws/occurrence-reader';
import { DynamoOccurrenceStore } from './aws/occurrence-store';
import { SqsWorkQueue } from './aws/work-queue';
import { ScheduledJobsError } from './protocol/errors';
import { RECONCILER_COMPONENT } from './protocol/metric-names';
import type {
  Announcer,
  Clock,
  Logger,
  Metrics,
  OccurrenceIndex,
  OccurrenceStore,
  RequeueStore,
} from './protocol/ports';
import { noMetrics, systemClock } from './protocol/ports';
import {
  parseReconcileThresholds,
  type ReconcileReport,
  type ReconcileThresholds,
  type ReconcileWorker,
  reconcile,
} from './protocol/reconcile';
import { parseWorkerRoutes } from './protocol/worker-routes';
import { powertoolsLogger } from './runtime/powertools-logger';
import { powertoolsMetrics } from './runtime/powertools-metrics';
import { ENV, requireEnv } from './runtime-env';

export interface ReconcilerOptions {
  /** Each worker's queue and stuck threshold by worker id; default: the WORKERS the stack sets. */
  readonly workers?: ReadonlyMap<string, ReconcileWorker>;
  readonly thresholds?: ReconcileThresholds;
  readonly store?: OccurrenceStore & RequeueStore;
  readonly index?: OccurrenceIndex;
  readonly announcer?: Announcer;
  readonly clock?: Clock;
  /** Given a logger and no metrics (tests, local runs), metrics are off rather than written to stdout as EMF. */
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly bucketName?: string;
}

/** Some of the run's reads or writes failed: the invocation fails (the Errors alarm), and the next run retries. */
export class ReconcileIncompleteError extends ScheduledJobsError {
  override readonly name = 'ReconcileIncompleteError';

  constructor(readonly report: ReconcileReport) {
    super(
      `reconcile run had ${report.errors} failed read(s) or write(s); fixed ${report.fixed.length}, the next run retries the rest`,
    );
  }
}

export type ReconcilerHandler = (event?: unknown) => Promise<ReconcileReport>;

export function createReconcilerHandler(options: ReconcilerOptions = {}): ReconcilerHandler {
  const thresholds =
    options.thresholds ?? parseReconcileThresholds(process.env[ENV.reconcileThresholds], ENV.reconcileThresholds);
  const logger = options.logger ?? powertoolsLogger('reconciler');
  const metrics =
    options.metrics ?? (options.logger ? noMetrics : powertoolsMetrics({ dimensions: { ...RECONCILER_COMPONENT } }));
  const clock = options.clock ?? systemClock;
  const tableName = () => requireEnv(ENV.tableName);
  const store = options.store ?? new DynamoOccurrenceStore(documentClient(), tableName());
  const deps = {
    workers: options.workers ?? reconcileWorkers(),
    thresholds,
    logger,
    metrics,
    clock,
    store,
    index: options.index ?? new DynamoOccurrenceReader(documentClient(), tableName()),
    announce: {
      store,
      clock,
      logger,
      announcer: options.announcer ?? new SnsAnnouncer(snsClient(), requireEnv(ENV.topicArn)),
      bucketName: options.bucketName ?? requireEnv(ENV.bucketName),
    },
  };
  return async () => {
    const report = await reconcile(deps);
    if (report.errors > 0) throw new ReconcileIncompleteError(report);
    return report;
  };
}

function reconcileWorkers(): ReadonlyMap<string, ReconcileWorker> {
  const routes = parseWorkerRoutes(process.env[ENV.workers], ENV.workers);
  return new Map(
    [...routes].map(([id, route]) => [
      id,
      { queue: new SqsWorkQueue(sqsClient(), route.queueUrl), stuckAfterSeconds: route.stuckAfterSeconds },
    ]),
  );
}

let deployed: ReconcilerHandler | undefined;
export const handler: ReconcilerHandler = (event) => {
  deployed ??= createReconcilerHandler();
  return deployed(event);
};
