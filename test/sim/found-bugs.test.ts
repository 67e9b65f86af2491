/**
 * Protocol bugs the simulation found, fixed since; each test states the guarantee the bug broke. Each bug is named
 * for what went wrong, as in docs/design.md. The third, "stray copy during a retry" (a second message of the same
 * occurrence kept alive through a long retry sequence), is a rule of the worker's and is tested with it, in
 * test/functions/worker.test.ts ("drops another copy of the occurrence's message while a retry waits").
 */
import { describe, expect, it } from 'vitest';
import { calmPlan } from '../../sim/plan';
import { type PolicyPlan, simulatePolicyPlan } from '../../sim/policy-world';
import { simulateRegistryPlan } from '../../sim/registry-world';
import { simulateOne } from '../../sim/simulate';

/** A six-hour outage: every attempt fails and is retried until attempts or the deadline run out. */
const longOutage = { jobMs: 1_000, outage: { fromMs: 0, forMs: 7 * 3600_000 } };
const EARLY_ARRIVAL = 'log: retry not due yet; hiding the message until it is';

describe("retry hidden by a slow clock: hidden by one worker's clock, found not due by another's", () => {
  it('with agreeing clocks, an occurrence whose every attempt fails ends FAILED with its last error', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [0] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'FAILED', attempt: 20 });
    expect(String(outcome.row?.lastError)).toContain('upstream unavailable');
  });

  // The retry is hidden until nextAttemptAt by the releasing worker's clock. A receiver whose clock was 3 s behind
  // found it "not due" and hid it again, two receives per attempt against a redrive limit of maxAttempts + 5: the
  // message reached the DLQ after about 12 attempts and the row stayed RETRY_WAIT. The claim now counts a retry as
  // due leaseSafetyMarginSeconds early, the skew the protocol tolerates.
  it('with worker clocks 3 s apart, the occurrence still ends FAILED after all 20 attempts, one receive each', async () => {
    const { outcome, checked } = await simulateOne(calmPlan({ ...longOutage, skewsMs: [3_000, 0] }));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'FAILED', attempt: 20 });
    expect(outcome.trace.filter((l) => l.what === EARLY_ARRIVAL)).toEqual([]);
    expect(outcome.messagesInDlq).toBe(0);
  });
});

describe('FAILED beside a committed report: the last attempt fails to see the report', () => {
  /** Attempt 1 commits its report and dies (its calls: claim, take the slot, commit); attempt 2 is the last (maxAttempts 2). */
  const commitThenDie = {
    jobMs: 5_000,
    maxAttempts: 2,
    callFaults: [{ actor: 'worker' as const, invocation: 1, call: 3, fault: { kind: 'crash-after' as const } }],
  };
  /** ... and attempt 2's look-up of the committed report (its third call, after claim and take: HeadObject) fails transiently. */
  const lookUpFails = { actor: 'worker' as const, invocation: 2, call: 3, fault: { kind: 'transient' as const } };

  it('commit-then-die before the last attempt: the last attempt adopts the report', async () => {
    const { outcome, checked } = await simulateOne(calmPlan(commitThenDie));
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
  });

  // The look-up was one HeadObject, not retried; its failure went to the failed-attempt path, which on the last
  // attempt recorded FAILED without looking again: FAILED beside a committed report, nothing announced. The look-up
  // is now retried like every other call, and the last attempt looks again before it records FAILED.
  it('and when that look-up fails once, the occurrence still ends SUCCEEDED with the committed report, announced once', async () => {
    const { outcome, checked } = await simulateOne(
      calmPlan({ ...commitThenDie, callFaults: [...commitThenDie.callFaults, lookUpFails] }),
    );
    expect(checked.violations).toEqual([]);
    expect(outcome.row?.status).toBe('SUCCEEDED');
    expect(outcome.objects.size).toBe(1);
    expect(outcome.delivered).toBe(1);
  });
});

describe('a row left RUNNING with its message in the DLQ: the world did not run the reconciler that repairs it', () => {
  // Invariant 4 (seed 90210, run 6,811 of 10,000, shrunk): with maxAttempts 1 the queue's redrive limit is 6 receives;
  // a crash after the claim, then failed claims (a transient failUnheld, a lost claim, two transient claims) and a
  // crash after one used them all, the message went to the job DLQ and the row stayed RUNNING. The deployed
  // reconciler re-enqueues such a row, but the single-occurrence world did not run it; every world now does, every
  // 5 minutes with the stack's thresholds, and invariant 4's bound counts its repair.
  it('with maxAttempts 1 and every receive used up, the reconciler re-enqueues the row and it ends FAILED in time', async () => {
    const { outcome, checked } = await simulateOne(
      calmPlan({
        seed: 0,
        jobMs: 1000,
        callFaults: [
          { actor: 'worker', call: 4, fault: { kind: 'transient' } },
          { actor: 'worker', call: 5, fault: { kind: 'lost-error' } },
          { actor: 'worker', call: 7, fault: { kind: 'transient' } },
          { actor: 'worker', call: 6, fault: { kind: 'transient' } },
          { actor: 'worker', call: 8, fault: { kind: 'crash-after' } },
        ],
        crashes: [{ invocation: 1, atMs: 0 }],
        maxAttempts: 1,
      }),
    );
    expect(checked.violations).toEqual([]);
    expect(outcome.row).toMatchObject({ status: 'FAILED', attempt: 1 });
    expect(outcome.reconcilerRequeues).toBeGreaterThan(0);
  });
});

/**
 * Found by the policy world (sim/policy-world.ts) on plans of fc.sample(policyPlan, { seed, numRuns }); each plan is
 * the generated one, kept whole so that the run replays exactly. Each failed before its fix with the invariant named.
 */
describe('the policy world: bugs the catch-up, pause and pauseAfterFailures runs found', () => {
  const plan = (p: object) => p as unknown as PolicyPlan;

  // P10 (seed 13, plan 364): allowAll's count of a failure was an unconditional increment; a lost response made the
  // SDK retry it, and one FAILED occurrence paused a job of pauseAfterFailures 2. The count is now fenced by its lease.
  it('a count whose response was lost counts once: no pause after fewer FAILED occurrences than pauseAfterFailures', async () => {
    const { violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 138680556,
          jobMs: 30355,
          schedulerDeliveries: [20339],
          callFaults: [
            { actor: 'worker', call: 11, fault: { kind: 'lost-retried' } },
            { actor: 'notifier', call: 13, fault: { kind: 'slow', ms: 3516 } },
            { actor: 'notifier', call: 9, fault: { kind: 'transient' } },
            { actor: 'worker', call: 1, fault: { kind: 'slow', ms: 35980 } },
            { actor: 'worker', call: 14, fault: { kind: 'crash-after' } },
          ],
          crashes: [{ invocation: 4, atMs: 173950 }],
          freezes: [{ invocation: 2, atMs: 101413, forMs: 365801 }],
          sqsDuplicates: [137975],
          skewsMs: [4696, 1319, 1935, 164],
          outage: { fromMs: 299999, forMs: 1077014 },
          maxAttempts: 1,
        },
        scenario: {
          overlap: 'allowAll',
          others: [
            { afterMs: 248322, jobMs: 134575, lateMs: 171084 },
            { afterMs: 193855, jobMs: 19190, lateMs: 426562 },
            { afterMs: 38815, jobMs: 11066, lateMs: 568875 },
          ],
          catchupWindowSeconds: 899,
          pauseAfterFailures: 2,
        },
      }),
    );
    expect(violations).toEqual([]);
  });

  // P4 (seed 16, plan 2128): the buffer's head, woken after the job paused itself, was SKIPPED/paused but stayed at
  // the head; the one behind it was never woken and stayed BUFFERED. A paused skip now leaves the buffer.
  it('a buffered occurrence behind one SKIPPED as paused is woken, and ends', async () => {
    const { outcome, violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 1346613841,
          jobMs: 1000,
          schedulerDeliveries: [25699, 4246],
          callFaults: [{ actor: 'trigger', call: 4, fault: { kind: 'transient' } }],
          crashes: [{ invocation: 1, atMs: 66331 }],
          freezes: [{ invocation: 4, atMs: 62725, forMs: 201872 }],
          sqsDuplicates: [3],
          skewsMs: [-3953, -2406, -4014, -2761],
          outage: { fromMs: 250046, forMs: 21928874 },
        },
        scenario: {
          overlap: 'bufferAll',
          others: [
            { afterMs: 54273, jobMs: 126884, lateMs: 509242 },
            { afterMs: 196505, jobMs: 21773, lateMs: 630514 },
            { afterMs: 236154, jobMs: 48920, lateMs: 190298 },
          ],
          pauseAfterFailures: 1,
        },
      }),
    );
    expect(violations).toEqual([]);
    expect(outcome.rows.map((r) => r?.status)).not.toContain('BUFFERED');
  });

  // P4 (seed 16, plan 2700): the worker that paused the job after failures read pausedAt on a clock 5.8 s ahead; the
  // fire 1.6 s after the schedule was disabled was before that pausedAt, and the resume never recorded it.
  it('a fire time held back just after a pause by a clock that runs ahead is recorded by the resume', async () => {
    const { outcome, violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 1821314478,
          jobMs: 86794,
          schedulerDeliveries: [0],
          callFaults: [{ actor: 'worker', call: 3, fault: { kind: 'pause-after', ms: 167843 } }],
          crashes: [],
          freezes: [],
          sqsDuplicates: [119866, 116304],
          skewsMs: [1894, 4530, 5782],
          outage: { fromMs: 7287, forMs: 30000 },
          maxAttempts: 1,
        },
        scenario: {
          overlap: 'bufferAll',
          others: [
            { afterMs: 240000, jobMs: 94441, lateMs: 699748 },
            { afterMs: 180000, jobMs: 111397, lateMs: 415449 },
            { afterMs: 120000, jobMs: 90127, lateMs: 329683 },
          ],
          catchupWindowSeconds: 465,
          pauseAfterFailures: 1,
          operator: [
            { atMs: 390800, action: 'pause' },
            { atMs: 869169, action: 'resume' },
          ],
        },
      }),
    );
    expect(violations).toEqual([]);
    expect(outcome.rows.every((r) => r !== undefined)).toBe(true);
  });

  // P4 (seed 20261201, run 7954 of the 10,000): a start frozen between its decision and its BUFFERED write put its
  // occurrence in the buffer after another worker had recorded it FAILED; its fenced write was refused, the FAILED one
  // stayed at the head, and the one behind it stayed BUFFERED. A delivery refused as finished now leaves the buffer.
  it('a finished occurrence at the head of the buffer leaves it on its next delivery, and the next one runs', async () => {
    const { outcome, violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 1666367467,
          jobMs: 58734,
          schedulerDeliveries: [11],
          callFaults: [
            { actor: 'worker', call: 9, fault: { kind: 'slow', ms: 3115 } },
            { actor: 'worker', call: 12, fault: { kind: 'pause-after', ms: 272424 } },
            { actor: 'trigger', call: 6, fault: { kind: 'transient' } },
            { actor: 'worker', call: 6, fault: { kind: 'slow', ms: 12510 } },
            { actor: 'trigger', call: 1, fault: { kind: 'slow', ms: 13386 } },
            { actor: 'trigger', call: 13, fault: { kind: 'slow', ms: 31779 } },
            { actor: 'notifier', call: 6, fault: { kind: 'transient' } },
            { actor: 'worker', call: 3, fault: { kind: 'slow', ms: 32121 } },
          ],
          crashes: [
            { invocation: 4, atMs: 28639 },
            { invocation: 4, atMs: 60963 },
          ],
          freezes: [{ invocation: 4, atMs: 46665, forMs: 7616 }],
          sqsDuplicates: [110196, 354368],
          skewsMs: [-4, 5241, 5365, 5461],
          outage: { fromMs: 126236, forMs: 280189 },
          maxAttempts: 3,
        },
        scenario: {
          overlap: 'bufferAll',
          others: [
            { afterMs: 45982, jobMs: 137558 },
            { afterMs: 274473, jobMs: 32017, lateMs: 231041 },
            { afterMs: 187932, jobMs: 136673, lateMs: 662144 },
          ],
          catchupWindowSeconds: 293,
          pauseAfterFailures: 3,
        },
      }),
    );
    expect(violations).toEqual([]);
    expect(outcome.rows.map((r) => r?.status)).not.toContain('BUFFERED');
  });

  // P10 (seed 1967791534, run 88 of 2000, shrunk): the pause after one failure was applied but its response lost; the
  // SDK's retry was refused by that very write, and the read that should have recognised it timed out after the
  // request was sent. The worker gave up before disabling the schedule, which kept firing. The refused write now
  // returns the row (ours: the pause is recognised without a read), and a read after no answer is retried.
  it('a pause whose response was lost and whose read-back fails still disables the schedule', async () => {
    const { outcome, violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 0,
          jobMs: 90001,
          schedulerDeliveries: [0],
          callFaults: [
            { actor: 'worker', call: 14, fault: { kind: 'lost-error' } },
            { actor: 'worker', call: 13, fault: { kind: 'lost-retried' } },
          ],
          crashes: [],
          freezes: [],
          sqsDuplicates: [93640],
          skewsMs: [0],
          storeBrownouts: [],
          outage: { fromMs: 80302, forMs: 30000 },
          maxAttempts: 2,
        },
        scenario: {
          overlap: 'skip',
          others: [{ afterMs: 60000, jobMs: 1000, lateMs: 34107 }],
          operator: [{ atMs: 94163, action: 'pause' }],
          pauseAfterFailures: 1,
        },
      }),
    );
    expect(violations).toEqual([]);
    const selfPause = outcome.jobStateWrites.find((w) => w.after.pauseCause === 'failures');
    expect(selfPause).toBeDefined();
    expect(outcome.scheduleChanges).toContainEqual(expect.objectContaining({ who: selfPause?.who, state: 'DISABLED' }));
  });

  // P10 (seed 7240001, run 5 of 300, shrunk): the release that counted the only failure a job of
  // pauseAfterFailures 1 allows was applied, but its response was lost past the SDK's retries; the worker logged it
  // and gave up, so the count stood at 1 with no pause, and the next start of the job would have run. The release is
  // now retried when unanswered, and the store recognises its own count in the refusal: the job pauses.
  it('a counting release applied but unanswered still pauses the job and disables the schedule', async () => {
    const { outcome, violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 0,
          jobMs: 60000,
          schedulerDeliveries: [0],
          callFaults: [{ actor: 'worker', call: 5, fault: { kind: 'lost-error' } }],
          crashes: [],
          freezes: [],
          sqsDuplicates: [60000],
          skewsMs: [0],
          storeBrownouts: [],
          outage: { fromMs: 0, forMs: 30000 },
          maxAttempts: 1,
        },
        scenario: {
          overlap: 'skip',
          others: [{ afterMs: 5000, jobMs: 1000, lateMs: 60001 }],
          catchupWindowSeconds: 60,
          pauseAfterFailures: 1,
        },
      }),
    );
    expect(violations).toEqual([]);
    const selfPause = outcome.jobStateWrites.find((w) => w.after.pauseCause === 'failures');
    expect(selfPause?.who).toBe('worker#1');
    expect(outcome.scheduleChanges).toContainEqual(expect.objectContaining({ who: 'worker#1', state: 'DISABLED' }));
  });

  // P3 (seed 73104, run 7,115 of the policy world's 10,000, shrunk): an extend sent slow, given up by its worker,
  // reached the table after the worker's next extend and set the lease's expiry back 27 s. The worker still believed
  // the later expiry; a cancelOther start that cancelled it waited only for the expiry in the row, and ran its job
  // beside the cancelled one's last seconds. An extend now never moves the expiry back.
  it('cancelOther: a late extend that arrives after a newer one does not shorten the lease the canceller waits out', async () => {
    const { violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 0,
          jobMs: 200001,
          schedulerDeliveries: [0],
          callFaults: [
            { actor: 'worker', call: 5, fault: { kind: 'lost-retried' } },
            { actor: 'worker', call: 4, fault: { kind: 'slow', ms: 26667 } },
          ],
          crashes: [],
          freezes: [],
          sqsDuplicates: [106778],
          skewsMs: [0, 10],
          storeBrownouts: [{ invocation: 1, fromMs: 72814, forMs: 114188 }],
        },
        scenario: { overlap: 'cancelOther', others: [{ afterMs: 106500, jobMs: 1000 }] },
      }),
    );
    expect(violations).toEqual([]);
  });

  // P3 (seed 16, plan 2842, an overlap-only plan): under cancelOther an occurrence retried after its worker died
  // having committed its report cancelled the running one, adopted the report at once and freed the slot; the next
  // start took it and ran beside the cancelled job, which works until its lease runs out. The adopter now waits too.
  it('cancelOther: the start that cancelled a running job and adopts its own report waits out the cancelled lease', async () => {
    const { violations } = await simulatePolicyPlan(
      plan({
        plan: {
          seed: 2111377829,
          jobMs: 191225,
          schedulerDeliveries: [0],
          callFaults: [
            { actor: 'worker', call: 3, fault: { kind: 'slow', ms: 22504 } },
            { actor: 'worker', call: 12, fault: { kind: 'transient' } },
          ],
          crashes: [],
          freezes: [{ invocation: 1, atMs: 192345, forMs: 88863 }],
          sqsDuplicates: [341146],
          skewsMs: [5683, 6983, 12],
          storeBrownouts: [{ invocation: 1, fromMs: 108243, forMs: 187499 }],
        },
        scenario: {
          overlap: 'cancelOther',
          others: [
            { afterMs: 270153, jobMs: 36330 },
            { afterMs: 275588, jobMs: 3364 },
            { afterMs: 245017, jobMs: 45378 },
          ],
        },
      }),
    );
    expect(violations).toEqual([]);
  });
});

/**
 * Found by the registry world (sim/registry-world.ts, `npm run sim:registry -- --redeploy`), fixed since. A
 * deployment that changes a job's template (its deadline, retention, target, role, window) left every schedule of the
 * job projected from the old one, for good: an upsert of the same spec is 'unchanged' and calls Scheduler not at all,
 * and the audit's driftOf could not see a stale template (no syncedTemplateHash on the row, no lastModifiedAt on the
 * template). The reconciler now reads templates with their last change (functions/aws/dated-templates.ts).
 */
describe('stale template: schedules projected from a template a deployment has since changed', () => {
  it('after a redeploy, the audit re-projects every schedule from the new template within a cycle', async () => {
    const { violations } = await simulateRegistryPlan({
      seed: 1,
      keys: 1,
      ops: [{ atMs: 0, caller: 1, key: 0, op: 'upsert', spec: 1 }],
      edits: [{ atMs: 600_000, key: 0, edit: 'redeploy' }],
      callFaults: [],
      phaseMs: 100_000,
    });
    expect(violations).toEqual([]);
  });
});

/**
 * Found by the registry world (`npm run sim:registry -- --redeploy`, seed 715307), fixed. The
 * dated-templates fix above misses a write in flight across the deployment: the writer reads the template, the
 * deployment changes it, the writer projects the old template and marks the row synced after the change, so syncedAt
 * is later than the template's lastModifiedAt and the audit never re-projects it (also with a template remembered
 * for 60 s by rememberingTemplates). The fix: markSynced records the hash of the template it projected with
 * (`syncedTemplateHash`), which driftOf compares with template.templateHash.
 */
describe('stale template, in flight: a write that read the template before a deployment and synced after it', () => {
  it('is re-projected from the new template by the audit within a cycle', async () => {
    const { violations } = await simulateRegistryPlan({
      seed: 0,
      keys: 1,
      ops: [{ atMs: 0, caller: 1, key: 0, op: 'upsert', spec: 0 }],
      edits: [{ atMs: 6, key: 0, edit: 'redeploy' }],
      callFaults: [],
      phaseMs: 0,
    });
    expect(violations).toEqual([]);
  });
});

/**
 * Found by the registry world (invariant S6), fixed. A row's version starts again at 1 when a
 * schedule is deleted (the tombstone removed) and created again, and every conditional write of the registry
 * (ScheduleRegistry.put's expectedVersion, markSynced, remove) checks the version alone. A pause that read v1 of the
 * old row and whose put arrives after the delete and the new upsert finds v1 again, and writes the old row's spec,
 * paused, over the new one: the upsert returned 'created', and its spec is gone (an ABA lost update). The same holds
 * for a late markSynced(v1), which would mark the new row synced while Scheduler holds the old projection. The fix:
 * every conditional write names the row's life as well as its version (RowVersion: version and createdAt).
 */
describe('ABA: a write from before a delete lands on the schedule created again after it', () => {
  it("a pause that read the deleted row never brings the deleted row's spec back over the new one", async () => {
    const { violations } = await simulateRegistryPlan({
      seed: 0,
      keys: 1,
      ops: [
        { atMs: 0, caller: 1, key: 0, op: 'upsert', spec: 0 },
        // Reads v1, and its put (its third call) arrives 2 s later, after the delete and the new upsert.
        { atMs: 1000, caller: 2, key: 0, op: 'pause', spec: 0 },
        { atMs: 1100, caller: 1, key: 0, op: 'delete', spec: 0 },
        { atMs: 1500, caller: 1, key: 0, op: 'upsert', spec: 1 },
      ],
      edits: [],
      callFaults: [{ actor: 'app', invocation: 2, call: 3, fault: { kind: 'slow', ms: 2000 } }],
      phaseMs: 0,
    });
    expect(violations).toEqual([]);
  });
});
