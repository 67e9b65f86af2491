/**
 * The rolling audit's repair bound and its requests, per stack (functions/protocol/audit-slices.ts): for 1, 10 and
 * 50 run-time-schedule jobs of N schedules each, the runs (and minutes) of a full cycle and of the repair bound, the
 * requests of a whole cycle and of one run (average and the heaviest), and what the heaviest run takes at assumed
 * round trips, AUDIT_JOB_CONCURRENCY jobs at a time, against the reconciler's 120-second timeout. Arithmetic only:
 *
 *   npx tsx bench/audit-bound.ts
 */
import {
  AUDIT_SLICES,
  bucketsOfSlice,
  DEFAULT_AUDIT_SLICES_PER_RUN,
  repairBoundRuns,
  runsPerCycle,
} from '../functions/protocol/audit-slices';
import { AUDIT_JOB_CONCURRENCY } from '../functions/protocol/reconcile-schedules';
import { AUDIT_BUCKETS } from '../functions/protocol/schedule-registry';
import { LIST_SCHEDULES_PAGE, RECONCILER_PERIOD_MINUTES } from './registry-model';

/** Round trips inside the reconciler, as bench/registry-model.ts assumes them. */
const LIST_PAGE_SECONDS = 0.1;
const QUERY_SECONDS = 0.02;
/** lib/occurrence-functions.ts RECONCILER_TIMEOUT_SECONDS. */
const RECONCILER_TIMEOUT_SECONDS = 120;

export interface AuditFigure {
  readonly jobs: number;
  readonly schedulesPerJob: number;
  readonly runsPerCycle: number;
  readonly repairBoundRuns: number;
  readonly repairBoundMinutes: number;
  /** ListSchedules calls and byAuditBucket Queries (one page each at these sizes) of a whole cycle, all jobs. */
  readonly listCallsPerCycle: number;
  readonly queriesPerCycle: number;
  /** The heaviest run: the one whose slices include a hex digit (a sixteenth of every job's schedules). */
  readonly heaviestRunRequests: number;
  readonly heaviestRunSeconds: number;
  readonly fitsTimeout: boolean;
}

/** ListSchedules pages of one slice of a job of `schedules` schedules (its registry names spread over the buckets). */
function listPagesOfSlice(slice: string, schedules: number): number {
  const held = (bucketsOfSlice(slice).length / AUDIT_BUCKETS) * schedules;
  return Math.max(1, Math.ceil(held / LIST_SCHEDULES_PAGE));
}

export function auditFigure(
  jobs: number,
  schedulesPerJob: number,
  slicesPerRun = DEFAULT_AUDIT_SLICES_PER_RUN,
): AuditFigure {
  const perSlice = AUDIT_SLICES.map((slice) => ({
    list: listPagesOfSlice(slice, schedulesPerJob),
    // A Query page holds 1 MB: at 2 KB rows, about 500 rows, more than a bucket holds here.
    queries: bucketsOfSlice(slice).length * Math.max(1, Math.ceil(schedulesPerJob / AUDIT_BUCKETS / 500)),
  }));
  let heaviest = { requests: 0, seconds: 0 };
  for (let start = 0; start < AUDIT_SLICES.length; start += slicesPerRun) {
    const window = Array.from({ length: slicesPerRun }, (_, i) => perSlice[(start + i) % perSlice.length]);
    const listPerJob = window.reduce((n, s) => n + (s?.list ?? 0), 0);
    const queriesPerJob = window.reduce((n, s) => n + (s?.queries ?? 0), 0);
    const [list, queries] = [jobs * listPerJob, jobs * queriesPerJob];
    // Jobs are audited AUDIT_JOB_CONCURRENCY at a time (reconcile-schedules.ts), each job's requests in sequence.
    const waves = Math.ceil(jobs / AUDIT_JOB_CONCURRENCY);
    const seconds = waves * (listPerJob * LIST_PAGE_SECONDS + queriesPerJob * QUERY_SECONDS);
    if (list + queries > heaviest.requests) heaviest = { requests: list + queries, seconds };
  }
  const bound = repairBoundRuns(slicesPerRun);
  return {
    jobs,
    schedulesPerJob,
    runsPerCycle: runsPerCycle(slicesPerRun),
    repairBoundRuns: bound,
    repairBoundMinutes: bound * RECONCILER_PERIOD_MINUTES,
    listCallsPerCycle: jobs * perSlice.reduce((n, s) => n + s.list, 0),
    queriesPerCycle: jobs * perSlice.reduce((n, s) => n + s.queries, 0),
    heaviestRunRequests: heaviest.requests,
    heaviestRunSeconds: heaviest.seconds,
    fitsTimeout: heaviest.seconds < RECONCILER_TIMEOUT_SECONDS,
  };
}

function main(): void {
  console.log(
    `The audit: ${AUDIT_SLICES.length} slices of every job's group, K = ${DEFAULT_AUDIT_SLICES_PER_RUN} a run, every ${RECONCILER_PERIOD_MINUTES} min; ` +
      `round trips ${LIST_PAGE_SECONDS * 1000} ms (ListSchedules) and ${QUERY_SECONDS * 1000} ms (Query), each job's in sequence, ${AUDIT_JOB_CONCURRENCY} jobs at a time`,
  );
  console.log('jobs  schedules/job  cycle (runs)  bound (runs, min)  ListSchedules/cycle  Queries/cycle  heaviest run');
  for (const n of [1_000, 100_000])
    for (const jobs of [1, 10, 50]) {
      const f = auditFigure(jobs, n);
      console.log(
        `${String(jobs).padStart(4)}  ${String(n).padStart(13)}  ${String(f.runsPerCycle).padStart(12)}  ${`${f.repairBoundRuns}, ${f.repairBoundMinutes}`.padStart(17)}  ` +
          `${String(f.listCallsPerCycle).padStart(19)}  ${String(f.queriesPerCycle).padStart(13)}  ` +
          `${f.heaviestRunRequests} requests, ${f.heaviestRunSeconds.toFixed(1)} s${f.fitsTimeout ? '' : ` (over the ${RECONCILER_TIMEOUT_SECONDS}-s timeout)`}`,
      );
    }
}

if (process.argv[1]?.endsWith('audit-bound.ts')) main();
