/**
 * What a job with `maxConcurrency` adds to the stack (functions/protocol/concurrency-cap.ts): its capacity row and
 * waiting list live in the occurrence table under the job's own partition, so no table is added. Its worker may
 * Query that partition (the waiting list in fair order) and DeleteItem there (an occurrence leaves the list), beside
 * the GetItem and UpdateItem it has on its jobs' rows; the reconciler reads and repairs the list (CAPPED_JOBS).
 */
import { Lazy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type { JobSettings } from '../functions/protocol/job-settings';
import type { CappedJob } from '../functions/protocol/reconcile-capacity';
import { ENV } from '../functions/runtime-env';
import type { JobWorker } from './job-worker';

const LIST_ACTIONS = ['dynamodb:Query', 'dynamodb:DeleteItem'];

/** The capped jobs of one stack's reconciler, and of each worker: the statements read them when synthesized. */
const cappedOfReconciler = new WeakMap<nodejs.NodejsFunction, CappedJob[]>();
const cappedOfWorker = new WeakMap<JobWorker, string[]>();

/** Adds a job to the capped jobs of its worker and of the reconciler; nothing for a job without maxConcurrency. */
export function addCappedJob(
  settings: JobSettings,
  worker: JobWorker,
  reconciler: nodejs.NodejsFunction,
  table: dynamodb.ITable,
): void {
  if (settings.maxConcurrency === undefined) return;
  let jobs = cappedOfReconciler.get(reconciler);
  if (jobs === undefined) {
    const all: CappedJob[] = [];
    jobs = all;
    cappedOfReconciler.set(reconciler, all);
    reconciler.addEnvironment(ENV.cappedJobs, Lazy.string({ produce: () => JSON.stringify(all) }));
    reconciler.addToRolePolicy(ownPartitions(['dynamodb:GetItem', ...LIST_ACTIONS], table, () => all.map((j) => j.id)));
  }
  jobs.push({ id: settings.id, worker: worker.workerId, maxConcurrency: settings.maxConcurrency });
  let ids = cappedOfWorker.get(worker);
  if (ids === undefined) {
    const own: string[] = [];
    ids = own;
    cappedOfWorker.set(worker, own);
    worker.function.addToRolePolicy(ownPartitions(LIST_ACTIONS, table, () => own));
  }
  ids.push(settings.id);
}

/** Actions on the capped jobs' own partitions only (the partition key is the job id: dynamodb:LeadingKeys). */
function ownPartitions(actions: string[], table: dynamodb.ITable, ids: () => string[]): iam.PolicyStatement {
  return new iam.PolicyStatement({
    actions,
    resources: [table.tableArn],
    conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': Lazy.list({ produce: ids }) } },
  });
}
