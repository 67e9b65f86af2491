/**
 * The workers of a stack as the trigger and the reconciler know them: each worker's job queue, and how long one of
 * its occurrences may sit unclaimed before the reconciler gives it a new message (its own queue's visibility timeout
 * plus a margin, worker-limits.ts). One entry per worker, not per job, so it does not bound the number of jobs. It
 * bounds the workers: about 18 with short ids fit the trigger's and the reconciler's 4 KB of environment (addWorker
 * refuses one more), before CloudFormation's 500 resources would stop them at about 32 (docs/design.md).
 */
import * as z from 'zod/mini';
import { issuesAsProblems, JOB_ID_PATTERN, JobSettingsError, parseJsonVariable, wholeNumber } from './setting-basics';

export interface WorkerRoute {
  readonly queueUrl: string;
  readonly stuckAfterSeconds: number;
}

const routeSchema = z.strictObject({
  queueUrl: z.string({ error: 'must be the URL of the worker queue' }).check(z.minLength(1)),
  stuckAfterSeconds: wholeNumber(60, 14 * 86_400),
});

/** Parse the JSON object of worker routes the stack sets (WORKERS); throws JobSettingsError naming each problem. */
export function parseWorkerRoutes(json: string | undefined, source: string): ReadonlyMap<string, WorkerRoute> {
  const parsed = parseJsonVariable(json, source);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.keys(parsed).length === 0)
    throw new JobSettingsError([`${source} must be a JSON object with one entry per worker`]);
  const problems: string[] = [];
  const routes = new Map<string, WorkerRoute>();
  for (const [id, value] of Object.entries(parsed)) {
    if (!JOB_ID_PATTERN.test(id)) problems.push(`${source}.${id}: not a worker id`);
    const route = routeSchema.safeParse(value);
    if (route.success) routes.set(id, route.data);
    else problems.push(...issuesAsProblems(route.error.issues, `${source}.${id}`));
  }
  if (problems.length > 0) throw new JobSettingsError(problems);
  return routes;
}
