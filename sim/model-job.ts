/**
 * The job the simulation runs unless a test gives its own: it works plan.jobMs in steps of JOB_STEP_MS, each step
 * one side effect on its upstream, and honours its signal: it checks it before every side effect and stops waiting
 * the moment it aborts. During the plan's outage its upstream is down and the step fails.
 */
import type { JobDefinition } from '../functions/protocol/ports';
import { delay } from '../functions/protocol/transient-retry';
import type { SideEffect } from './outcome';
import type { FaultPlan } from './plan';
import type { VirtualTime } from './virtual-time';

/** How often the job touches its upstream: each step is one side effect. */
const JOB_STEP_MS = 10_000;

/**
 * `jobMsOf`: how long the occurrence works, by its id (world.ts occurrenceIdOf: its scheduled time, or `key|time`
 * for a keyed one); the policy world's occurrences differ.
 */
export function modelJob(
  plan: FaultPlan,
  vt: VirtualTime,
  t0: number,
  sideEffects: SideEffect[],
  jobMsOf: (occurrenceId: string) => number = () => plan.jobMs,
): JobDefinition {
  const upstreamDown = (t: number) =>
    plan.outage !== undefined && t >= t0 + plan.outage.fromMs && t < t0 + plan.outage.fromMs + plan.outage.forMs;
  return {
    reportExtension: 'txt',
    async run(occurrence, { signal }) {
      const leaseId = occurrence.leaseId;
      if (leaseId === undefined) throw new Error('the model job ran without a lease');
      const id =
        occurrence.scheduleKey === undefined
          ? occurrence.scheduledTime
          : `${occurrence.scheduleKey}|${occurrence.scheduledTime}`;
      const jobMs = jobMsOf(id);
      const steps = Math.max(1, Math.ceil(jobMs / JOB_STEP_MS));
      for (let i = 0; i < steps; i++) {
        signal.throwIfAborted();
        if (upstreamDown(vt.now)) throw new Error('upstream unavailable');
        sideEffects.push({ leaseId, at: vt.now, scheduledTime: id });
        await delay(Math.min(JOB_STEP_MS, jobMs - i * JOB_STEP_MS), signal);
      }
      signal.throwIfAborted();
      return { body: `report of ${occurrence.scheduledTime} by ${occurrence.leaseId}`, contentType: 'text/plain' };
    },
  };
}
