/**
 * A worker's route: its job queue, and how long one of its occurrences may sit unclaimed before the reconciler gives
 * it a new message (its own queue's visibility timeout plus a margin, worker-limits.ts).
 *
 * No function is told every worker's route. Each schedule's input carries its own job's route (schedule-event.ts),
 * the trigger sends to the queue the event names and records the route on the occurrence's row, and the reconciler
 * re-sends a stuck row to the route the row records. A row recorded before rows carried their route has only its
 * worker's id: the reconciler then reads the route from the job's deployed schedule (a RouteLookup), as the trigger
 * does for an event from a run-time schedule projected before schedules carried it. So the number of workers of a
 * stack is bounded by CloudFormation, not by Lambda's 4 KB of environment (docs/design.md, "How many workers").
 */
import { checkAll, nonEmptyString, optional, wholeNumber } from './field-checks';

/** Where a worker's occurrences go, and how long one may wait unclaimed before the reconciler re-sends it. */
export interface WorkerRoute {
  /** The worker's job queue. */
  readonly queueUrl: string;
  /** Seconds an occurrence may sit unclaimed before the reconciler gives it a new message. */
  readonly stuckAfterSeconds: number;
}

/** A worker's stuck threshold: at least a minute, at most the longest SQS retention (14 days). */
export const STUCK_AFTER_SECONDS_RANGE = { min: 60, max: 14 * 86_400 } as const;

/**
 * The route fields of a schedule event or a row: both or neither (a schedule deployed before routes were carried has
 * neither). Problems name `where` and the field.
 */
export function checkRouteFields(
  fields: { readonly queueUrl?: unknown; readonly stuckAfterSeconds?: unknown },
  where = '',
):
  | { readonly ok: true; readonly value: WorkerRoute | undefined }
  | { readonly ok: false; readonly problems: string[] } {
  const checked = checkAll({
    queueUrl: optional(fields.queueUrl, (v) => nonEmptyString(`${where}queueUrl`, v)),
    stuckAfterSeconds: optional(fields.stuckAfterSeconds, (v) =>
      wholeNumber(`${where}stuckAfterSeconds`, v, STUCK_AFTER_SECONDS_RANGE),
    ),
  });
  if (!checked.ok) return checked;
  const { queueUrl, stuckAfterSeconds } = checked.value;
  if (queueUrl === undefined && stuckAfterSeconds === undefined) return { ok: true, value: undefined };
  if (queueUrl === undefined || stuckAfterSeconds === undefined)
    return {
      ok: false,
      problems: [`${where}queueUrl and ${where}stuckAfterSeconds go together: give both (the route) or neither`],
    };
  return { ok: true, value: { queueUrl, stuckAfterSeconds } };
}

/** The route a row records, when it records a whole and valid one (rows recorded before routes were: none). */
export function recordedRoute(row: {
  readonly queueUrl?: unknown;
  readonly stuckAfterSeconds?: unknown;
}): WorkerRoute | undefined {
  const checked = checkRouteFields(row);
  return checked.ok ? checked.value : undefined;
}

/**
 * Where the route of a job is found when neither its event nor its row carries it: the job's deployed schedule (a
 * fixed schedule, or the template of a job with run-time schedules), whose input carries it since routes are carried.
 */
export interface RouteLookup {
  /** The route of `worker` as job `jobId`'s schedule names it; undefined when the schedule is gone or names another. */
  routeOf(jobId: string, worker: string): Promise<WorkerRoute | undefined>;
}

/**
 * A RouteLookup that asks `lookup` once per job and worker for as long as `ttlMs` (a warm function's later events get
 * the route without a call; a redeployed route is seen within the ttl). A failed look-up is not kept.
 */
export function cachedRouteLookup(lookup: RouteLookup, now: () => number, ttlMs = 60_000): RouteLookup {
  const cache = new Map<string, { at: number; route: Promise<WorkerRoute | undefined> }>();
  return {
    routeOf(jobId, worker) {
      const key = `${jobId}\u0000${worker}`;
      const hit = cache.get(key);
      if (hit !== undefined && now() - hit.at < ttlMs) return hit.route;
      const route = lookup.routeOf(jobId, worker);
      cache.set(key, { at: now(), route });
      route.catch(() => cache.delete(key));
      return route;
    },
  };
}
