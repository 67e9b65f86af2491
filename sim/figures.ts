/**
 * The original design's commentary's timing figures, measured by running fixed scenarios through the simulated world for each
 * design: the original design's worker (sim/variants.ts ORIGINAL), ours at its defaults, and ours at the original lease timing.
 * Nothing here is typed in: every number comes from a run's trace, rows and request log.
 */

import type { Belief, WorldOutcome } from './outcome';
import { calmPlan, type FaultPlan } from './plan';
import type { ProtocolVariant } from './variants';
import { runWorld, T0 } from './world';

/** The job the lease figures use: 200 s of work, longer than one lease, shorter than the 300 s time limit. */
export const FIGURE_JOB_MS = 200_000;
/** The job of the request-count figures, as in test/functions/scenarios.test.ts: two heartbeats at our defaults. */
export const REQUEST_JOB_MS = 100_000;
/** A second worker ready to claim at any moment: a copy of the message every second from 100 s to 300 s. */
const COMPETITOR = Array.from({ length: 201 }, (_, i) => 100_000 + i * 1_000);

export interface DesignFigures {
  readonly design: string;
  /** Largest k such that k consecutive failed extends (from the first) still end with the first worker completing. */
  readonly failedTicksSurvived: number;
  /** With one failed extend too many: seconds from the lease's expiry in the table to the job being stopped (< 0: before). */
  readonly lossToAbortS: number;
  /** How the first worker learned it had to stop, in that scenario. */
  readonly stoppedBy: string;
  /** Longest time two workers both believed they held the occurrence, over the extend-failure scenarios. */
  readonly twoHoldersS: number;
  readonly outage: { wakeUps: number; firstRetryS: number; recoveryS: number };
  readonly requestsHappyPath: number;
  readonly requestsPerRetry: number;
}

/** The first worker's extends (its calls 3, 4, ...: after the claim and the take of the running slot; a first attempt does no report look-up) fail `k` times in a row. */
function failedExtends(k: number, extra: Partial<FaultPlan> = {}): FaultPlan {
  return calmPlan({
    jobMs: FIGURE_JOB_MS,
    sqsDuplicates: COMPETITOR,
    callFaults: Array.from({ length: k }, (_, i) => ({
      actor: 'worker' as const,
      invocation: 1,
      call: 3 + i,
      fault: { kind: 'transient' as const },
    })),
    ...extra,
  });
}

function firstBelief(o: WorldOutcome): Belief {
  const first = o.beliefs.find((b) => b.leaseId === 'lease-1');
  if (first === undefined) throw new Error('no worker claimed the occurrence');
  return first;
}

/** When a belief ended: every belief has ended once the run is over. */
function endOf(b: Belief): number {
  if (b.to === undefined) throw new Error(`the belief of ${b.leaseId} never ended`);
  return b.to;
}

function expiryOf(o: WorldOutcome, leaseId: string): number {
  const expiry = o.leaseExpiries.get(leaseId);
  if (expiry === undefined) throw new Error(`the table never recorded an expiry for ${leaseId}`);
  return expiry;
}

/** Seconds during which the first worker and any other both believed they held the occurrence. */
function twoHolders(o: WorldOutcome): number {
  const first = firstBelief(o);
  let overlap = 0;
  for (const b of o.beliefs) {
    if (b === first) continue;
    overlap += Math.max(0, Math.min(endOf(first), endOf(b)) - Math.max(first.from, b.from));
  }
  return overlap / 1000;
}

/** Did the first worker keep its lease and finish the occurrence itself? */
const survived = (o: WorldOutcome) => o.claims === 1 && firstBelief(o).end === 'occurrence SUCCEEDED';

async function outageFigures(variant: ProtocolVariant, jitter: () => number) {
  const outageMs = 3600_000;
  const o = await runWorld(calmPlan({ jobMs: 1_000, outage: { fromMs: 0, forMs: outageMs } }), { variant, jitter });
  // One belief per successful claim: the attempts, in order.
  const attempts = o.beliefs.map((b) => b.from);
  const success = o.beliefs.find((b) => b.end === 'occurrence SUCCEEDED');
  return {
    wakeUps: attempts.filter((t) => t > attempts[0] && t < T0 + outageMs).length,
    firstRetryS: (attempts[1] - attempts[0]) / 1000,
    recoveryS: success ? (success.from - (T0 + outageMs)) / 1000 : NaN,
  };
}

async function requestFigures(variant: ProtocolVariant) {
  const happy = await runWorld(calmPlan({ jobMs: REQUEST_JOB_MS }), { variant });
  // The first attempt fails at once (its upstream is down for 2 s), the retry succeeds.
  const oneRetry = await runWorld(calmPlan({ jobMs: REQUEST_JOB_MS, outage: { fromMs: 0, forMs: 2_000 } }), {
    variant,
  });
  return { requestsHappyPath: happy.calls.length, requestsPerRetry: oneRetry.calls.length - happy.calls.length };
}

export async function measureDesign(
  design: string,
  variant: ProtocolVariant,
  jitter: () => number = () => 0,
): Promise<DesignFigures> {
  let failedTicksSurvived = 0;
  let twoHoldersS = 0;
  // Fail 1, 2, 3 ... extends in a row until the first worker no longer finishes the occurrence itself.
  let lost: WorldOutcome | undefined;
  for (let k = 1; k <= 12 && lost === undefined; k++) {
    const o = await runWorld(failedExtends(k), { variant });
    twoHoldersS = Math.max(twoHoldersS, twoHolders(o));
    if (survived(o)) failedTicksSurvived = k;
    else lost = o;
  }
  if (lost === undefined) throw new Error(`${design}: still holding its lease after 12 failed extends`);
  const first = firstBelief(lost);
  return {
    design,
    failedTicksSurvived,
    lossToAbortS: (endOf(first) - expiryOf(lost, 'lease-1')) / 1000,
    stoppedBy: first.end ?? 'never',
    twoHoldersS,
    outage: await outageFigures(variant, jitter),
    ...(await requestFigures(variant)),
  };
}
