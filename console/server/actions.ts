/**
 * POST /api/actions/*: the operator's actions, each through the library function the CLI runs, recorded as the
 * console's operator (`by`) and written to the audit trail (one line per action, whatever came of it).
 *
 *   retry     retryOccurrence (functions/protocol/manual-retry.ts)
 *   cancel    cancelOccurrence (functions/protocol/cancel-occurrence.ts): one occurrence, with an optional note
 *   run       runJobNow (job-control.ts), for a job or one of its run-time schedules
 *   pause     pauseJob; for one run-time schedule, pauseSchedule (operations/schedules.ts)
 *   resume    resumeJob; for one run-time schedule, resumeSchedule
 *   backfill  planBackfill, then previewBackfill (dry run) or recordBackfill (operations/backfill.ts)
 *
 * A refusal by the row's state (retry of a SUCCEEDED occurrence, run of a paused job) is a 409 that still carries
 * the outcome and its sentence.
 */

import { randomUUID } from 'node:crypto';
import { cancelOccurrence } from '../../functions/protocol/cancel-occurrence';
import {
  type DeployedJob,
  MAX_BY_CHARS,
  MAX_NOTE_CHARS,
  pauseJob,
  resumeJob,
  runJobNow,
  seriesOfJob,
} from '../../functions/protocol/job-control';
import { retryOccurrence } from '../../functions/protocol/manual-retry';
import type { Logger, WorkQueue } from '../../functions/protocol/ports';
import type { TriggerDeps, TriggerResult } from '../../functions/protocol/record-occurrence';
import { ScheduleError } from '../../functions/protocol/schedule-times';
import { backfillRangeProblem, planBackfill, previewBackfill, recordBackfill } from '../../operations/backfill';
import { pauseSchedule, resumeSchedule } from '../../operations/schedules';
import type { ActionResult, BackfillPreview } from '../contract';
import type { ConsoleDeps } from './deps';
import { badParameter, type ErrorStatus, errorAnswer, HttpError } from './http-errors';
import { ALL_TIMES, deployedJobOf, scheduleOfJob } from './jobs';
import {
  bodyObject,
  booleanParam,
  jobIdParam,
  keyParam,
  overlapParam,
  scheduledTimeParam,
  textParam,
  timeParam,
} from './params';

export const ACTIONS = ['retry', 'cancel', 'run', 'pause', 'resume', 'backfill'] as const;
export type ActionName = (typeof ACTIONS)[number];

/** The most occurrences one backfill from the console records (the CLI's --max default). */
export const CONSOLE_BACKFILL_MAX = 1000;
/** The times a dry run lists. */
const PREVIEW_TIMES = 100;

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

type Answer = ActionResult | BackfillPreview;

/** Runs one action and writes its audit line. */
export async function runAction(
  deps: ConsoleDeps,
  action: ActionName,
  body: unknown,
): Promise<{ readonly status: 200 | 409; readonly answer: Answer | (Answer & { error: string }) }> {
  const by = deps.operator.slice(0, MAX_BY_CHARS);
  const request: Record<string, unknown> = {};
  const audit = (outcome: string) =>
    deps.audit({ at: new Date(deps.clock.now()).toISOString(), by, action, request, outcome });
  try {
    const answer = await ACTION_HANDLERS[action](deps, parametersRead(bodyObject(body), request), by);
    audit(answer.outcome);
    if (answer.outcome === 'refused') return { status: 409, answer: { ...answer, error: answer.message } };
    return { status: 200, answer };
  } catch (error) {
    audit(`error: ${errorAnswer(error).error}`);
    throw error;
  }
}

/**
 * The body as the handler sees it, copying each field it reads (and so checks) into `into`: the audit line carries
 * the parameters the action took, never a field it does not know (a second `by`, say).
 */
function parametersRead(body: Record<string, unknown>, into: Record<string, unknown>): Record<string, unknown> {
  return new Proxy(body, {
    get(target, field) {
      if (typeof field === 'string' && Object.hasOwn(target, field)) into[field] = target[field];
      return Reflect.get(target, field);
    },
  });
}

type Handler = (deps: ConsoleDeps, body: Record<string, unknown>, by: string) => Promise<Answer>;

const ACTION_HANDLERS: Record<ActionName, Handler> = {
  retry: async (deps, body, by) => {
    const jobId = jobIdParam('jobId', body.jobId);
    const scheduleKey = keyParam('scheduleKey', body.scheduleKey);
    const scheduledTime = scheduledTimeParam('scheduledTime', body.scheduledTime);
    const force = booleanParam('force', body.force, false);
    const job = await deployedJobOf(deps, jobId);
    const queue = queueOf(deps, job);
    const key = { jobId, ...(scheduleKey === undefined ? {} : { scheduleKey }), scheduledTime };
    const result = await retryOccurrence(
      {
        store: deps.store,
        queues: new Map([[job.route.worker, queue]]),
        clock: deps.clock,
        jobs: new Map([[job.id, job.route]]),
      },
      key,
      { force, by },
    );
    const name = `${scheduleKey === undefined ? jobId : `${jobId} schedule ${scheduleKey}`} ${scheduledTime}`;
    switch (result.outcome) {
      case 'reopened':
        return {
          outcome: 'reopened',
          by,
          message:
            `${name} was FAILED after ${result.previous.attempt} attempt(s); reopened as PENDING with a fresh attempt ` +
            `budget and deadline ${result.deadlineAt}, and enqueued.`,
        };
      case 'enqueued':
        return {
          outcome: 'enqueued',
          by,
          message: `${name} enqueued again (it is ${result.status}; its row was left as it was): ${result.note}`,
        };
      default:
        return {
          outcome: 'refused',
          by,
          message: `refused to retry ${name}: ${result.reason}`,
          // The page offers "retry with force" for a row whose message may have been lost.
          forceWouldEnqueue: result.forceWouldEnqueue,
        };
    }
  },

  cancel: async (deps, body, by) => {
    const jobId = jobIdParam('jobId', body.jobId);
    const scheduleKey = keyParam('scheduleKey', body.scheduleKey);
    const scheduledTime = scheduledTimeParam('scheduledTime', body.scheduledTime);
    const note = body.note === undefined || body.note === '' ? undefined : textParam('note', body.note, MAX_NOTE_CHARS);
    const key = { jobId, ...(scheduleKey === undefined ? {} : { scheduleKey }), scheduledTime };
    const name = `${scheduleKey === undefined ? jobId : `${jobId} schedule ${scheduleKey}`} ${scheduledTime}`;
    const result = await cancelOccurrence({ store: deps.store, clock: deps.clock, newId: randomUUID }, key, {
      by,
      ...(note === undefined ? {} : { note }),
    });
    if (result.outcome === 'refused')
      return { outcome: 'refused', by, message: `refused to cancel ${name}: ${result.reason}` };
    const stops =
      result.stopsBy === undefined
        ? 'it will not run.'
        : `its worker stops at its next heartbeat, by ${result.stopsBy} at the latest, and commits no report.`;
    return { outcome: 'cancelled', by, message: `cancelled ${name} (it was ${result.previous.status}): ${stops}` };
  },

  run: async (deps, body, by) => {
    const jobId = jobIdParam('jobId', body.jobId);
    const scheduleKey = keyParam('scheduleKey', body.scheduleKey);
    const overlap = overlapParam('overlap', body.overlap);
    const job = await jobOrSchedule(deps, jobId, scheduleKey);
    if (job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined)
      throw badParameter('scheduleKey', `job ${jobId} takes schedules at run time: run one of its schedules`);
    const result = await runJobNow({ states: deps.states, clock: deps.clock, trigger: triggerOf(deps, job) }, job, {
      by,
      ...(overlap === undefined ? {} : { overlap }),
    });
    if (result.outcome === 'refused')
      return { outcome: 'refused', by, message: `refused to run ${jobId}: ${result.reason}` };
    const policy = overlap === undefined ? "the job's overlap policy applies" : `overlap ${overlap} for this one`;
    return {
      outcome: result.outcome,
      by,
      message: `${seriesOfJob(job)} ${result.scheduledTime} ${RUN_WORDS[result.outcome]} (${policy}).`,
    };
  },

  pause: async (deps, body, by) => {
    const jobId = jobIdParam('jobId', body.jobId);
    const scheduleKey = keyParam('scheduleKey', body.scheduleKey);
    const note = textParam('note', body.note, MAX_NOTE_CHARS);
    const template = await deployedJobOf(deps, jobId);
    if (scheduleKey !== undefined) {
      const { schedule } = await scheduleOfJob(deps, template, scheduleKey);
      const registry = deps.registry as NonNullable<ConsoleDeps['registry']>;
      if (schedule.state === 'PAUSED')
        return { outcome: 'already-paused', by, message: `schedule ${scheduleKey} of ${jobId} was paused already.` };
      await pauseSchedule(registry, jobId, scheduleKey, { by });
      return {
        outcome: 'paused',
        by,
        message: `paused schedule ${scheduleKey} of ${jobId}: its Scheduler schedule is DISABLED (note: ${note}).`,
      };
    }
    const schedules = deps.schedules;
    if (schedules === undefined) throw new HttpError(503, 'the schedule switch is unknown: actions are not wired');
    const result = await pauseJob({ states: deps.states, clock: deps.clock, schedules }, jobId, { note, by });
    const state = result.state;
    return result.outcome === 'paused'
      ? {
          outcome: 'paused',
          by,
          message: `paused ${jobId}: its schedule is DISABLED. Occurrences already in flight are SKIPPED (paused).`,
        }
      : {
          outcome: 'already-paused',
          by,
          message: `${jobId} was paused already, since ${state.pausedAt} by ${state.pausedBy ?? 'unknown'}: ${state.pauseNote ?? 'no note'} (kept).`,
        };
  },

  resume: async (deps, body, by) => {
    const jobId = jobIdParam('jobId', body.jobId);
    const scheduleKey = keyParam('scheduleKey', body.scheduleKey);
    const template = await deployedJobOf(deps, jobId);
    if (scheduleKey !== undefined) {
      const { schedule } = await scheduleOfJob(deps, template, scheduleKey);
      const registry = deps.registry as NonNullable<ConsoleDeps['registry']>;
      const was = schedule.state;
      await resumeSchedule(registry, jobId, scheduleKey, { by });
      return was === 'PAUSED'
        ? {
            outcome: 'resumed',
            by,
            message: `resumed schedule ${scheduleKey} of ${jobId}: its Scheduler schedule is ENABLED; times missed while paused are not run.`,
          }
        : { outcome: 'not-paused', by, message: `schedule ${scheduleKey} of ${jobId} was not paused; it is ENABLED.` };
    }
    const schedules = deps.schedules;
    if (schedules === undefined) throw new HttpError(503, 'the schedule switch is unknown: actions are not wired');
    const result = await resumeJob(
      {
        states: deps.states,
        clock: deps.clock,
        schedules,
        trigger: triggerOf(deps, template),
        history: {
          newestFirst: (series, limit) => deps.occurrences.newestFirst(series, { ...ALL_TIMES, limit }),
        },
      },
      template,
      { by },
    );
    if (result.outcome === 'not-paused')
      return {
        outcome: 'not-paused',
        by,
        message: `${jobId} is not paused; its schedule is ENABLED. Nothing to catch up.`,
      };
    const { catchUp } = result;
    const missed = catchUp.missed['recorded-missed'] ?? 0;
    return {
      outcome: 'resumed',
      by,
      message:
        `resumed ${jobId}: its schedule is ENABLED; ${catchUp.runTimes.length} missed fire time(s) inside the ` +
        `catch-up window recorded to run, ${missed} older one(s) recorded SKIPPED (missed)` +
        (catchUp.olderThanRetention > 0
          ? `, ${catchUp.olderThanRetention} older than the retention only counted.`
          : '.'),
    };
  },

  backfill: async (deps, body, by) => {
    const jobId = jobIdParam('jobId', body.jobId);
    const from = timeParam('from', body.from);
    const to = timeParam('to', body.to);
    const overlap = overlapParam('overlap', body.overlap) ?? 'bufferAll';
    const dryRun = booleanParam('dryRun', body.dryRun);
    const problem = backfillRangeProblem(from, to, deps.clock.now());
    if (problem !== undefined) throw badParameter(problem.parameter, problem.problem);
    if (overlap === 'allowAll' && !dryRun)
      throw badParameter(
        'overlap',
        'allowAll backfills wait for their runs, more than a request can: use `occurrences backfill --overlap allowAll`',
      );
    const job = await jobOrSchedule(deps, jobId, keyParam('scheduleKey', body.scheduleKey));
    if (job.runtimeScheduleGroup !== undefined && job.scheduleKey === undefined)
      throw badParameter('scheduleKey', `job ${jobId} takes schedules at run time: backfill one of its schedules`);
    let plan: ReturnType<typeof planBackfill>;
    try {
      plan = planBackfill(job, { from, to, max: CONSOLE_BACKFILL_MAX });
    } catch (error) {
      if (error instanceof ScheduleError) throw badParameter('to', error.message);
      throw error;
    }
    if (dryRun) {
      const preview = await previewBackfill(
        { listJobNewestFirst: (series, range) => deps.occurrences.newestFirst(series, range) },
        plan,
      );
      const already = Object.values(preview.existing).reduce((a: number, b) => a + (b ?? 0), 0);
      const answer: BackfillPreview = {
        outcome: 'dry-run',
        by,
        planned: plan.times.length,
        existing: preview.existing,
        times: plan.times.slice(0, PREVIEW_TIMES),
        message:
          `${job.schedule} (${job.timeZone}) fires ${plan.times.length} time(s) in the range; ${already} already ` +
          `recorded, ${plan.times.length - already} would be recorded and enqueued with overlap ${overlap}. Nothing was written.`,
      };
      return answer;
    }
    const queue = queueOf(deps, job);
    const recorded = await recordBackfill(
      { store: deps.store, queues: new Map([[job.route.worker, queue]]), clock: deps.clock },
      plan,
      { overlap, by },
    );
    if (recorded.failure !== undefined) throw recorded.failure;
    return {
      outcome: 'recorded',
      by,
      message:
        `backfilled ${seriesOfJob(job)}: ${plan.times.length} occurrence(s) in the schedule; ${describeResults(recorded.results)}. ` +
        'Running it again is safe: it is idempotent.',
    };
  },
};

const RUN_WORDS: Record<TriggerResult, string> = {
  recorded: 'recorded and enqueued',
  'pending-re-enqueued': 'was recorded already and is still PENDING: enqueued again',
  'duplicate-suppressed': 'was recorded already and has been claimed or finished: left alone',
  'recorded-missed': 'recorded as SKIPPED (missed)',
};

const RESULT_WORDS: Record<TriggerResult, string> = {
  recorded: 'recorded and enqueued',
  'pending-re-enqueued': 'already recorded but still PENDING, enqueued again',
  'duplicate-suppressed': 'already recorded, left alone',
  'recorded-missed': 'recorded as SKIPPED (missed)',
};

function describeResults(results: Partial<Record<TriggerResult, number>>): string {
  const parts = (Object.keys(RESULT_WORDS) as TriggerResult[])
    .filter((r) => results[r])
    .map((r) => `${results[r]} ${RESULT_WORDS[r]}`);
  return parts.length > 0 ? parts.join('; ') : 'nothing to do';
}

/** The deployed job, or one of its run-time schedules as a job (from the registry). */
async function jobOrSchedule(deps: ConsoleDeps, jobId: string, key: string | undefined): Promise<DeployedJob> {
  const template = await deployedJobOf(deps, jobId);
  return key === undefined ? template : (await scheduleOfJob(deps, template, key)).job;
}

/** The queue of the job's worker; a 503 naming the flag when it is unknown. */
function queueOf(deps: ConsoleDeps, job: DeployedJob): WorkQueue {
  const queue = deps.queues?.get(job.route.worker);
  if (queue !== undefined) return queue;
  const known = [...(deps.queues?.keys() ?? [])];
  throw new HttpError(
    503 as ErrorStatus,
    `the queue of worker ${job.route.worker}, which runs job ${job.id}, is unknown (known: ${known.join(', ') || 'none'}): ` +
      `start the console with --worker-queue ${job.route.worker}=<queue URL>`,
  );
}

function triggerOf(deps: ConsoleDeps, job: DeployedJob): TriggerDeps {
  return {
    store: deps.store,
    queues: new Map([[job.route.worker, queueOf(deps, job)]]),
    clock: deps.clock,
    logger: quiet,
  };
}
