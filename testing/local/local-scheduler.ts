/**
 * Scheduler, as a local run plays it (moto stores schedules but fires none): each schedule's fire times from its
 * expression in its time zone (functions/protocol/schedule-times.ts), its Target.Input with the context placeholders
 * filled in, each occurrence delivered `copies` times at once to the trigger (Scheduler delivers at least once), a
 * failed invocation retried as Lambda retries an asynchronous one; then the rows read until they settle.
 */
import { randomUUID } from 'node:crypto';
import { type Occurrence, type OccurrenceKey, TERMINAL_STATUSES } from '../../functions/protocol/occurrence';
import { scheduleTimes } from '../../functions/protocol/schedule-times';
import type { ScheduleSpec } from './app-model';
import type { LoadedFunction } from './load-functions';
import { LOCAL_REGION } from './local-aws';
import { LOCAL_ACCOUNT } from './local-resources';
import { lambdaContext } from './sqs-event-source';

export interface Fired {
  readonly key: OccurrenceKey;
  readonly outcome: string;
  readonly late?: boolean;
}

export interface FirePlan {
  readonly plan: { from: Date; count: number; copies: number };
  readonly read: (key: OccurrenceKey) => Promise<Occurrence | undefined>;
  readonly announcing: boolean;
  readonly deadline: number;
}

/**
 * The schedules' next `count` times, one round at a time as time would bring them: round k fires every schedule's
 * k-th time, and the next round starts when the round's rows have settled.
 */
export async function fireInTurn(
  schedules: readonly ScheduleSpec[],
  functions: ReadonlyMap<string, LoadedFunction>,
  run: FirePlan,
): Promise<{ fired: Fired[]; rows: (Occurrence | undefined)[]; timedOut: boolean }> {
  const fired: Fired[] = [];
  const timesOf = new Map(schedules.map((s) => [s, fireTimes(s, run.plan.from, run.plan.count)]));
  for (let round = 0; round < run.plan.count; round++) {
    const due = schedules.flatMap((s) => {
      const time = timesOf.get(s)?.[round];
      return time === undefined ? [] : [{ schedule: s, time }];
    });
    if (due.length === 0) break;
    const roundFired = await fireSchedules(due, functions, run.plan.copies);
    fired.push(...roundFired);
    const settled = await waitUntilSettled(
      run.read,
      uniqueKeys(roundFired.map((f) => f.key)),
      run.announcing,
      run.deadline - performance.now(),
    );
    if (settled.timedOut) break;
  }
  const keys = uniqueKeys(fired.map((f) => f.key));
  return { fired, ...(await waitUntilSettled(run.read, keys, run.announcing, run.deadline - performance.now())) };
}

/** Every schedule's next `count` times at once, as Scheduler delivers a backlog after an outage. */
export async function fireAtOnce(
  schedules: readonly ScheduleSpec[],
  functions: ReadonlyMap<string, LoadedFunction>,
  run: FirePlan,
): Promise<{ fired: Fired[]; rows: (Occurrence | undefined)[]; timedOut: boolean }> {
  const due = schedules.flatMap((schedule) =>
    fireTimes(schedule, run.plan.from, run.plan.count).map((time) => ({ schedule, time })),
  );
  const fired = await fireSchedules(due, functions, run.plan.copies);
  const keys = uniqueKeys(fired.map((f) => f.key));
  return { fired, ...(await waitUntilSettled(run.read, keys, run.announcing, run.deadline - performance.now())) };
}

/** One round of occurrences, each delivered `copies` times at once to its trigger (Lambda async retries). */
export async function fireSchedules(
  due: readonly { schedule: ScheduleSpec; time: string }[],
  functions: ReadonlyMap<string, LoadedFunction>,
  copies: number,
): Promise<Fired[]> {
  const deliveries = due.flatMap((d) => Array.from({ length: copies }, () => d));
  return Promise.all(
    deliveries.map(async ({ schedule, time }) => {
      const trigger = functions.get(schedule.target) as LoadedFunction;
      const event = scheduleInput(schedule, time);
      const key: OccurrenceKey = {
        jobId: schedule.jobId,
        ...(schedule.scheduleKey === undefined ? {} : { scheduleKey: schedule.scheduleKey }),
        scheduledTime: time,
      };
      let error = '';
      for (let attempt = 0; attempt <= trigger.spec.asyncRetryAttempts; attempt++) {
        try {
          const context = lambdaContext(trigger.label, trigger.spec.timeoutSeconds);
          // As Scheduler invokes its target: a run-time schedule through the alias its Target.Arn names.
          const invoked = schedule.invokedArn === undefined ? {} : { invokedFunctionArn: schedule.invokedArn };
          const result = await trigger.invoke(event, { ...context, ...invoked });
          return { key, outcome: String(result) };
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
        }
      }
      // Deployed, the event would now be in the trigger's dead-letter queue.
      return { key, outcome: `trigger failed: ${error}` };
    }),
  );
}

/** The schedule's next `count` times at or after `from`, within its start and end dates (functions/protocol/schedule-times.ts). */
export function fireTimes(schedule: ScheduleSpec, from: Date, count: number): string[] {
  const start =
    schedule.startDate === undefined ? from : new Date(Math.max(from.getTime(), Date.parse(schedule.startDate)));
  const end = schedule.endDate === undefined ? Number.POSITIVE_INFINITY : Date.parse(schedule.endDate);
  const times: string[] = [];
  for (const t of scheduleTimes({ schedule: schedule.expression, timeZone: schedule.timeZone }, start)) {
    if (t.getTime() > end || times.length === count) break;
    times.push(t.toISOString().replace('.000Z', 'Z'));
  }
  return times;
}

/** The schedule's Target.Input as Scheduler delivers it at `time`, its context placeholders filled in. */
export function scheduleInput(schedule: ScheduleSpec, time: string): unknown {
  const group = schedule.groupName ?? 'default';
  const arn = `arn:aws:scheduler:${LOCAL_REGION}:${LOCAL_ACCOUNT}:schedule/${group}/${schedule.name ?? schedule.logicalId}`;
  const text = (schedule.input ?? '{}')
    .replaceAll('<aws.scheduler.scheduled-time>', time)
    .replaceAll('<aws.scheduler.schedule-arn>', arn)
    .replaceAll('<aws.scheduler.execution-id>', randomUUID())
    .replaceAll('<aws.scheduler.attempt-number>', '1');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const POLL_MS = 250;

/** Reads the rows until each is SUCCEEDED (and announced, where announcing) or FAILED, or the time is up. */
export async function waitUntilSettled(
  read: (key: OccurrenceKey) => Promise<Occurrence | undefined>,
  keys: readonly OccurrenceKey[],
  announcing: boolean,
  timeoutMs: number,
): Promise<{ rows: (Occurrence | undefined)[]; timedOut: boolean }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const rows = await Promise.all(keys.map(read));
    const settled = rows.every(
      (r) =>
        r !== undefined &&
        TERMINAL_STATUSES.includes(r.status) &&
        (r.status !== 'SUCCEEDED' || !announcing || r.notifiedAt !== undefined),
    );
    if (settled) return { rows, timedOut: false };
    if (performance.now() >= deadline) return { rows, timedOut: true };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export function uniqueKeys(keys: readonly OccurrenceKey[]): OccurrenceKey[] {
  const seen = new Map<string, OccurrenceKey>();
  for (const k of keys) seen.set(`${k.jobId}\u0000${k.scheduleKey ?? ''}\u0000${k.scheduledTime}`, k);
  // Each job's occurrences together, in time order: how the policies between them read.
  return [...seen.values()].sort(
    (a, b) =>
      a.jobId.localeCompare(b.jobId) ||
      (a.scheduleKey ?? '').localeCompare(b.scheduleKey ?? '') ||
      a.scheduledTime.localeCompare(b.scheduledTime),
  );
}
