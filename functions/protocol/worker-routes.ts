/**
 * The workers of a stack as the trigger and the reconciler know them: each worker's job queue, and how long one of
 * its occurrences may sit unclaimed before the reconciler gives it a new message (its own queue's visibility timeout
 * plus a margin, worker-limits.ts). One entry per worker, not per job, so it does not bound the number of jobs. It
 * bounds the workers: about 18 with short ids fit the trigger's and the reconciler's 4 KB of environment (addWorker
 * refuses one more), before CloudFormation's 500 resources would stop them at about 32 (docs/design.md).
 */
import { checkAll, isJsonObject, nonEmptyString, wholeNumber } from './field-checks';
import { JOB_ID_PATTERN, JobSettingsError, parseJsonVariable } from './setting-basics';

export interface WorkerRoute {
  readonly queueUrl: string;
  readonly stuckAfterSeconds: number;
}

const STUCK_AFTER_SECONDS_RANGE = { min: 60, max: 14 * 86_400 } as const;
const ROUTE_FIELDS: ReadonlySet<string> = new Set(['queueUrl', 'stuckAfterSeconds']);

/** One worker's route, or its problems, each starting with `where` (`WORKERS.exports`) and the field. */
function checkRoute(value: unknown, where: string): { route?: WorkerRoute; problems: string[] } {
  if (!isJsonObject(value)) return { problems: [`${where} must be a JSON object with queueUrl and stuckAfterSeconds`] };
  // The stack writes this variable: a field it does not know is a mismatch between stack and function versions.
  const unknown = Object.keys(value).filter((field) => !ROUTE_FIELDS.has(field));
  const checked = checkAll({
    queueUrl: nonEmptyString(`${where}.queueUrl`, value.queueUrl),
    stuckAfterSeconds: wholeNumber(`${where}.stuckAfterSeconds`, value.stuckAfterSeconds, STUCK_AFTER_SECONDS_RANGE),
  });
  const problems = [
    ...(checked.ok ? [] : checked.problems),
    ...unknown.map((field) => `${where}.${field} is not a field of a worker route`),
  ];
  return checked.ok && problems.length === 0 ? { route: checked.value, problems } : { problems };
}

/** Parse the JSON object of worker routes the stack sets (WORKERS); throws JobSettingsError naming each problem. */
export function parseWorkerRoutes(json: string | undefined, source: string): ReadonlyMap<string, WorkerRoute> {
  const parsed = parseJsonVariable(json, source);
  if (!isJsonObject(parsed) || Object.keys(parsed).length === 0)
    throw new JobSettingsError([`${source} must be a JSON object with one entry per worker`]);
  const problems: string[] = [];
  const routes = new Map<string, WorkerRoute>();
  for (const [id, value] of Object.entries(parsed)) {
    if (!JOB_ID_PATTERN.test(id)) problems.push(`${source}.${id}: not a worker id`);
    const checked = checkRoute(value, `${source}.${id}`);
    if (checked.route !== undefined) routes.set(id, checked.route);
    problems.push(...checked.problems);
  }
  if (problems.length > 0) throw new JobSettingsError(problems);
  return routes;
}
