/**
 * One simulated occurrence, end to end: Scheduler → trigger Lambda → job queue → worker Lambdas → table stream →
 * notifier Lambda, all running the real handlers and adapters over the stateful fakes in sim/fakes/fake-aws.ts,
 * on virtual time, with the faults of a FaultPlan injected between the adapters and the fakes (the "network").
 *
 * What the simulation models, and how:
 * - Network: every SDK call takes 5 ms each way; a fault can fail it, slow it, lose its response (after it was
 *   applied), or kill the calling process before or after it is applied. An aborted call (the adapters pass an
 *   AbortSignal) rejects at once, but a request already on its way is still applied, as on a real network.
 * - Lambda: each invocation is an Actor. The worker is killed at its function timeout, the trigger at 10 s and the
 *   notifier at 30 s. A failed trigger invocation is retried twice (1 and 2 minutes later), then dropped.
 * - SQS: visibility timeout, ChangeMessageVisibility by the current receipt handle, redelivery of an
 *   unacknowledged message, maxReceiveCount and a DLQ, batches of up to 5, duplicate copies (plan.sqsDuplicates).
 * - Table stream: every write that makes the row SUCCEEDED is delivered to the notifier, retried with backoff
 *   (2, 4, 8 ... 60 s) until it succeeds. The SNS FIFO topic drops a repeated deduplication id within 5 minutes.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { SnsAnnouncer } from '../functions/aws/announcer';
import { DynamoOccurrenceStore } from '../functions/aws/occurrence-store';
import { S3ReportStore } from '../functions/aws/report-store';
import { SqsWorkQueue } from '../functions/aws/work-queue';
import { createNotifierHandler } from '../functions/notifier';
import { type JobSettings, withDefaults } from '../functions/protocol/job-settings';
import { iso } from '../functions/protocol/occurrence';
import type { Clock, JobDefinition, Logger } from '../functions/protocol/ports';
import { createTriggerHandler } from '../functions/trigger';
import { createWorkerHandler } from '../functions/worker';
import { type WorkerLimits, workerLimits } from '../lib/resource-definitions';
import { describeCall, describeFault, operationOf, TABLE_OPERATIONS, timeoutError, transientError } from './calls';
import type { Row } from './fakes/dynamo-expressions';
import { FakeAws } from './fakes/fake-aws';
import { streamEvent } from './fakes/stream-event';
import { JobQueue, type Received } from './job-queue';
import { type ActorKind, BOUNDS, type CallFault, type FaultPlan, seededRandom } from './plan';
import { OURS, type ProtocolVariant } from './variants';
import { Actor, VirtualTime } from './virtual-time';

export const JOB_ID = 'report';
export const SCHEDULED_TIME = '2026-11-30T06:00:00Z';
export const T0 = Date.parse(SCHEDULED_TIME);
export const REPORT_KEY = `reports/${JOB_ID}/${SCHEDULED_TIME}.txt`;
const TABLE = 'occurrences';
const BUCKET = 'reports-bucket';
const LATENCY_MS = 5;
/** How often the job touches its upstream: each step is one side effect. */
export const JOB_STEP_MS = 10_000;
/** Lambda's fixed settings the stack deploys (lib/scheduled-jobs.ts). */
const TRIGGER_TIMEOUT_MS = 10_000;
const TRIGGER_RETRY_DELAYS_MS = [60_000, 120_000];
const NOTIFIER_TIMEOUT_MS = 30_000;

export interface TraceLine {
  /** ms after the scheduled time. */
  readonly t: number;
  readonly who: string;
  readonly what: string;
}

/** One side effect of the job on its upstream, by the worker holding `leaseId`. */
export interface SideEffect {
  readonly leaseId: string;
  readonly at: number;
}

/** A worker's belief that it holds the occurrence: from its claim to the moment it learns otherwise or stops. */
export interface Belief {
  readonly leaseId: string;
  readonly actor: string;
  readonly from: number;
  to: number | undefined;
  end?: string;
}

export interface StaleWrite {
  readonly t: number;
  readonly who: string;
  readonly what: string;
  readonly rowBefore: string;
}

export interface WorldOutcome {
  readonly plan: FaultPlan;
  readonly variant: string;
  readonly settings: JobSettings;
  readonly limits: WorkerLimits;
  readonly trace: TraceLine[];
  readonly row: Row | undefined;
  readonly objects: ReadonlyMap<string, { body: string; metadata?: Record<string, string> }>;
  readonly overwrites: TraceLine[];
  /** When the report object was first written (true time). */
  readonly firstCommitAt: number | undefined;
  readonly staleWrites: StaleWrite[];
  /** Fenced writes accepted after the writer's lease had expired while nobody else had claimed (by design). */
  readonly lateUncontestedWrites: number;
  readonly sideEffects: SideEffect[];
  readonly beliefs: Belief[];
  readonly published: number;
  readonly delivered: number;
  /** The last expiry the table recorded for each lease (claim or extend). */
  readonly leaseExpiries: ReadonlyMap<string, number>;
  /** When the row became SUCCEEDED or FAILED, true time. */
  readonly finishedAt: number | undefined;
  readonly deadlineAt: number;
  readonly horizon: number;
  readonly messagesInDlq: number;
  readonly triggerEventsDropped: number;
  readonly workerCrashes: number;
  readonly skipped: { crashes: number; triggerFaults: number; notifierFaults: number };
  /** Largest freeze of a worker, and the spread of worker clock offsets, in ms: the overlap check's preconditions. */
  readonly maxFreezeMs: number;
  readonly skewSpreadMs: number;
  readonly calls: { who: string; op: string; t: number }[];
  readonly claims: number;
  readonly events: number;
}

export interface WorldOptions {
  readonly variant?: ProtocolVariant;
  /** Stop the run here (true time) even if events remain; defaults to the deadline plus the finish bound. */
  readonly horizon?: number;
  /** Uniform [0, 1) for the retry jitter; defaults to the plan's seeded generator. */
  readonly jitter?: () => number;
  /** Replaces the model job (which works plan.jobMs in steps of JOB_STEP_MS, each one side effect). */
  readonly job?: JobDefinition;
}

/**
 * How long after its deadline an occurrence may still be finishing: a message can come back once per worker crash,
 * each after the queue's visibility timeout, and the last delivery needs one more to record the outcome.
 */
export function finishBoundMs(limits: WorkerLimits): number {
  return (BOUNDS.maxWorkerCrashes + 2) * limits.queueVisibilityTimeoutSeconds * 1000;
}

export async function runWorld(plan: FaultPlan, options: WorldOptions = {}): Promise<WorldOutcome> {
  const variant = options.variant ?? OURS;
  const base = withDefaults({ id: JOB_ID, ...variant.settings });
  const settings =
    plan.maxAttempts === undefined ? base : { ...base, retry: { ...base.retry, maxAttempts: plan.maxAttempts } };
  const limits = workerLimits([settings]);
  const deadlineAt = T0 + settings.retry.deadlineSeconds * 1000;
  const horizon = options.horizon ?? deadlineAt + finishBoundMs(limits);
  const vt = new VirtualTime(T0);
  const random = seededRandom(plan.seed);
  const trace: TraceLine[] = [];
  const note = (who: string, what: string) => trace.push({ t: vt.now - T0, who, what });

  const aws = sharedFakeAws(vt);
  const out = {
    overwrites: [] as TraceLine[],
    firstCommitAt: undefined as number | undefined,
    staleWrites: [] as StaleWrite[],
    lateUncontestedWrites: 0,
    sideEffects: [] as SideEffect[],
    beliefs: [] as Belief[],
    calls: [] as { who: string; op: string; t: number }[],
    finishedAt: undefined as number | undefined,
    leaseExpiries: new Map<string, number>(),
    workerCrashes: 0,
    maxFreezeMs: 0,
    skews: [] as number[],
    triggerEventsDropped: 0,
    claims: 0,
    skipped: { crashes: 0, triggerFaults: 0, notifierFaults: 0 },
  };

  // ---- actors -------------------------------------------------------------------------------------------------
  const actorCounts: Record<ActorKind, number> = { trigger: 0, worker: 0, notifier: 0 };
  const newActor = (kind: ActorKind, skewMs = 0) => new Actor(kind, ++actorCounts[kind], skewMs);
  const beliefsOf = new Map<Actor, Belief[]>();
  const triggerFailures = new Map<number, number>();
  const triggerDeliveryOf = new Map<Actor, number>();
  let notifierFailures = 0;

  /** The invocation returned: Lambda freezes its sandbox, so nothing of it runs any more. Not a crash. */
  const ended = (actor: Actor) => {
    actor.dead = true;
  };
  const kill = (actor: Actor, why: string) => {
    if (actor.dead) return;
    actor.dead = true;
    if (actor.kind === 'worker') out.workerCrashes++;
    for (const b of beliefsOf.get(actor) ?? [])
      if (b.to === undefined) {
        b.to = vt.now;
        b.end = `process died (${why})`;
      }
    note(actor.name, `DIES: ${why}`);
  };

  const freeze = (actor: Actor, ms: number) => {
    if (actor.dead) return;
    actor.frozenUntil = Math.max(actor.frozenUntil, vt.now + ms);
    out.maxFreezeMs = Math.max(out.maxFreezeMs, ms);
    note(actor.name, `FREEZES for ${ms} ms (GC pause)`);
  };

  /** May this actor suffer one more fault without leaving the stated bounds? */
  const faultAllowed = (actor: Actor, fault: CallFault): boolean => {
    if (actor.kind === 'trigger') {
      const ok = (triggerFailures.get(triggerDeliveryOf.get(actor)!) ?? 0) < BOUNDS.maxTriggerFailuresPerDelivery;
      if (!ok) out.skipped.triggerFaults++;
      return ok;
    }
    if (actor.kind === 'notifier') {
      const ok = notifierFailures < BOUNDS.maxNotifierFailures;
      if (!ok) out.skipped.notifierFaults++;
      return ok;
    }
    if (fault.kind === 'crash-before' || fault.kind === 'crash-after') {
      const ok = out.workerCrashes < BOUNDS.maxWorkerCrashes;
      if (!ok) out.skipped.crashes++;
      return ok;
    }
    return true;
  };

  // ---- the network between the adapters and the fakes ----------------------------------------------------------
  const callCounts: Record<ActorKind, number> = { trigger: 0, worker: 0, notifier: 0 };
  const faultsByCall = new Map<string, CallFault>();
  for (const f of plan.callFaults) {
    const key = f.invocation === undefined ? `${f.actor}#${f.call}` : `${f.actor}${f.invocation}#${f.call}`;
    if (!faultsByCall.has(key)) faultsByCall.set(key, f.fault);
  }
  const callsOf = new Map<Actor, number>();

  const intercept = (client: { send: (...a: any[]) => Promise<any> }) => {
    // The class's send, which FakeAws has just stubbed for this run.
    const proto = Object.getPrototypeOf(client) as { send: (...a: any[]) => Promise<any> };
    const fakeSend = (command: unknown) => proto.send.call(client, command);
    client.send = (command: any, sendOptions?: { abortSignal?: AbortSignal }) => {
      const actor = VirtualTime.actor()!;
      const op = operationOf(command);
      const label = describeCall(op, command.input);
      const callNo = ++callCounts[actor.kind];
      const ownCallNo = (callsOf.get(actor) ?? 0) + 1;
      callsOf.set(actor, ownCallNo);
      let fault =
        faultsByCall.get(`${actor.kind}#${callNo}`) ?? faultsByCall.get(`${actor.kind}${actor.index}#${ownCallNo}`);
      if (fault && !faultAllowed(actor, fault)) fault = undefined;
      if (fault === undefined && actor.kind === 'worker' && TABLE_OPERATIONS.has(op) && inBrownout(actor, vt.now))
        fault = { kind: 'transient' };
      out.calls.push({ who: actor.name, op, t: vt.now });
      note(actor.name, `${label}${fault ? `  [fault: ${describeFault(fault)}]` : ''}`);
      return new Promise((resolve, reject) => {
        let settled = false;
        const respond = (fn: () => void) =>
          vt.schedule(
            LATENCY_MS,
            () => {
              if (settled) return;
              settled = true;
              fn();
            },
            actor,
          );
        const signal = sendOptions?.abortSignal;
        if (signal?.aborted) {
          settled = true;
          return reject(Object.assign(new Error('request aborted before it was sent'), { name: 'AbortError' }));
        }
        signal?.addEventListener(
          'abort',
          () => {
            if (settled) return;
            settled = true;
            reject(Object.assign(new Error(`request aborted: ${String(signal.reason)}`), { name: 'AbortError' }));
          },
          { once: true },
        );
        if (fault?.kind === 'crash-before') return kill(actor, `crashed sending ${label}`);
        if (fault?.kind === 'transient') return respond(() => reject(transientError(op)));
        if (fault?.kind === 'pause-after') freeze(actor, fault.ms);
        const arriveIn = LATENCY_MS + (fault?.kind === 'slow' ? fault.ms : 0);
        vt.scheduleSystem(arriveIn, async () => {
          let result = await applyObserved(actor, op, label, command, () => fakeSend(command));
          if (fault?.kind === 'lost-retried') {
            note('aws', `response to ${actor.name}'s ${op} lost; the SDK retries it`);
            result = await applyObserved(actor, op, label, command, () => fakeSend(command));
          }
          if (fault?.kind === 'crash-after') return kill(actor, `crashed after ${label} was applied`);
          if (fault?.kind === 'lost-error') return respond(() => reject(timeoutError(op)));
          respond(() => (result.ok ? resolve(result.value) : reject(result.error)));
        });
      });
    };
  };

  /** Apply one request to the fakes, and check what only the service side can see (stale writes, overwrites). */
  const applyObserved = async (actor: Actor, op: string, label: string, command: any, send: () => Promise<unknown>) => {
    const input = command.input;
    const rowBefore = op === 'UpdateItem' ? aws.row(input.Key.jobId, input.Key.scheduledTime) : undefined;
    const existed = op === 'PutObject' ? aws.objects.has(input.Key) : false;
    let result: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      result = { ok: true, value: await send() };
    } catch (error) {
      result = { ok: false, error };
    }
    note('aws', `${actor.name} ${label} → ${result.ok ? 'ok' : (result.error as Error).name}`);
    if (!result.ok) return result;
    if (op === 'PutObject' && existed)
      out.overwrites.push({ t: vt.now - T0, who: actor.name, what: `overwrote ${input.Key}` });
    if (op === 'PutObject' && !existed) out.firstCommitAt = vt.now;
    const leaseId = input.ExpressionAttributeValues?.[':leaseId'] as string | undefined;
    const isClaim = op === 'UpdateItem' && String(input.UpdateExpression).includes('#attempt = #attempt + :one');
    if (isClaim) out.claims++;
    if (op === 'UpdateItem' && actor.kind === 'worker' && leaseId !== undefined && !isClaim) {
      const rowAfter = aws.row(input.Key.jobId, input.Key.scheduledTime);
      const held = rowBefore?.status === 'RUNNING' && rowBefore.leaseId === leaseId;
      if (!held && JSON.stringify(rowBefore) !== JSON.stringify(rowAfter)) {
        out.staleWrites.push({
          t: vt.now - T0,
          who: actor.name,
          what: label,
          rowBefore: `${rowBefore?.status} under ${rowBefore?.leaseId}`,
        });
      } else if (held && String(rowBefore!.leaseExpiresAt) < iso(vt.now)) {
        out.lateUncontestedWrites++;
      }
    }
    return result;
  };

  const inBrownout = (actor: Actor, t: number) =>
    (plan.storeBrownouts ?? []).some(
      (b) => b.invocation === actor.index && t >= T0 + b.fromMs && t < T0 + b.fromMs + b.forMs,
    );

  // ---- adapters, handlers, the job ----------------------------------------------------------------------------
  const { doc, s3, sqs, sns } = sdkClients();
  for (const c of [doc, s3, sqs, sns]) intercept(c as never);

  const clock: Clock = { now: () => vt.now + (VirtualTime.actor()?.skewMs ?? 0) };
  const logger: Logger = {
    info: (m, f) => onLog(m, f),
    warn: (m, f) => onLog(m, f),
    error: (m, f) => onLog(m, f),
  };
  const END_OF_BELIEF = [
    'aborting job',
    'lease lost; stopping without writing',
    'lease lost before complete; the report stays committed for the next holder to adopt',
    'occurrence SUCCEEDED',
    'attempt failed; retry scheduled',
    'occurrence FAILED',
    'could not record the failed attempt',
    'lease lost while recording a failed attempt',
    'could not record SUCCEEDED; the redelivery will adopt the committed report',
  ];
  const onLog = (message: string, fields: Record<string, unknown> = {}) => {
    const actor = VirtualTime.actor();
    const leaseId = fields.leaseId as string | undefined;
    note(actor?.name ?? '?', `log: ${message}${fields.error ? ` (${String(fields.error).slice(0, 140)})` : ''}`);
    if (actor === undefined || leaseId === undefined) return;
    if (message === 'claimed occurrence') {
      const belief: Belief = { leaseId, actor: actor.name, from: vt.now, to: undefined };
      out.beliefs.push(belief);
      beliefsOf.set(actor, [...(beliefsOf.get(actor) ?? []), belief]);
    } else if (END_OF_BELIEF.includes(message)) {
      const belief = out.beliefs.find((b) => b.leaseId === leaseId && b.to === undefined);
      if (belief) {
        belief.to = vt.now;
        belief.end = message;
      }
    }
  };

  const dependencyDown = (t: number) =>
    plan.outage !== undefined && t >= T0 + plan.outage.fromMs && t < T0 + plan.outage.fromMs + plan.outage.forMs;
  const job: JobDefinition = options.job ?? {
    reportExtension: 'txt',
    // Honours its signal: it checks it before every side effect and stops waiting the moment it aborts.
    async run(occurrence, { signal }) {
      const steps = Math.max(1, Math.ceil(plan.jobMs / JOB_STEP_MS));
      for (let i = 0; i < steps; i++) {
        signal.throwIfAborted();
        if (dependencyDown(vt.now)) throw new Error('upstream unavailable');
        out.sideEffects.push({ leaseId: occurrence.leaseId!, at: vt.now });
        await sleep(Math.min(JOB_STEP_MS, plan.jobMs - i * JOB_STEP_MS), signal);
      }
      signal.throwIfAborted();
      return { body: `report of ${occurrence.scheduledTime} by ${occurrence.leaseId}`, contentType: 'text/plain' };
    },
  };

  const settingsMap = new Map([[JOB_ID, settings]]);
  const store = new DynamoOccurrenceStore(doc, TABLE);
  const queue = new SqsWorkQueue(sqs, 'https://sqs.eu-central-1.amazonaws.com/123456789012/jobs');
  let leases = 0;
  const trigger = createTriggerHandler({ settings: settingsMap, store, queue, clock, logger });
  const worker = createWorkerHandler({
    jobs: { [JOB_ID]: job },
    settings: settingsMap,
    store: variant.workerStore?.(doc, TABLE) ?? store,
    reports: new S3ReportStore(s3, BUCKET),
    queue,
    clock,
    logger,
    random: options.jitter ?? random,
    newLeaseId: () => `lease-${++leases}`,
  });
  const notifier = createNotifierHandler({
    store,
    clock,
    logger,
    bucketName: BUCKET,
    announcer: new SnsAnnouncer(sns, 'arn:aws:sns:eu-central-1:123456789012:report-ready.fifo'),
  });

  // ---- SQS: the job queue and the Lambda poller ---------------------------------------------------------------
  const jobQueue = new JobQueue(
    vt,
    limits,
    random,
    (what) => note('sqs', what),
    (batch) => invokeWorker(batch),
  );
  aws.queueModel = {
    send: (body) => {
      const id = jobQueue.send(body);
      note('sqs', `${id} enqueued`);
      // SQS delivers at least once: the plan's extra copies of the first message.
      if (id !== 'msg-1') return;
      for (const after of plan.sqsDuplicates) {
        vt.scheduleSystem(after, () =>
          note('sqs', `${jobQueue.send(body)}: a duplicate copy of msg-1 (at-least-once delivery)`),
        );
      }
    },
    changeVisibility: (receiptHandle, seconds) => jobQueue.changeVisibility(receiptHandle, seconds),
  };

  // ---- Lambda invocations -------------------------------------------------------------------------------------
  function invokeWorker(received: Received[]) {
    const index = actorCounts.worker + 1;
    const actor = newActor('worker', plan.skewsMs[(index - 1) % plan.skewsMs.length] ?? 0);
    out.skews.push(actor.skewMs);
    note(
      actor.name,
      `invoked with ${received.map((r) => `${r.id} (receive ${r.receiveCount})`).join(', ')}; clock ${actor.skewMs >= 0 ? '+' : ''}${actor.skewMs} ms`,
    );
    const timeoutAt = vt.now + limits.functionTimeoutSeconds * 1000;
    vt.scheduleSystem(timeoutAt - vt.now, () => kill(actor, 'Lambda timeout'));
    for (const c of plan.crashes.filter((x) => x.invocation === index)) {
      vt.scheduleSystem(c.atMs, () => {
        if (actor.dead) return;
        if (out.workerCrashes >= BOUNDS.maxWorkerCrashes) {
          out.skipped.crashes++;
          return;
        }
        kill(actor, `killed ${c.atMs} ms into the invocation`);
      });
    }
    for (const f of plan.freezes.filter((x) => x.invocation === index))
      vt.scheduleSystem(f.atMs, () => freeze(actor, f.forMs));
    const event = sqsEvent(received.map((r) => ({ messageId: r.id, receiptHandle: r.receipt, body: r.body })));
    const context = {
      getRemainingTimeInMillis: () => Math.max(0, timeoutAt - vt.now),
      logStreamName: `worker/${actor.index}`,
      awsRequestId: `req-${actor.index}`,
    };
    vt.runAs(actor, () => worker(event, context)).then(
      (response) => {
        if (actor.dead) return;
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        for (const r of received) {
          if (!failed.has(r.id) && jobQueue.delete(r.id, r.receipt)) note('sqs', `${r.id} deleted`);
        }
        note(actor.name, `returned${failed.size ? `; batch item failures: ${[...failed].join(', ')}` : ''}`);
        ended(actor);
      },
      (error) => {
        note(actor.name, `threw ${String(error)}`);
        ended(actor);
      },
    );
  }

  function invokeTrigger(delivery: number, tryNo: number) {
    const actor = newActor('trigger');
    triggerDeliveryOf.set(actor, delivery);
    note(actor.name, `invoked (Scheduler delivery ${delivery}, try ${tryNo})`);
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      kill(actor, why);
      triggerFailures.set(delivery, (triggerFailures.get(delivery) ?? 0) + 1);
      const retryIn = TRIGGER_RETRY_DELAYS_MS[tryNo - 1];
      if (retryIn === undefined) {
        out.triggerEventsDropped++;
        note('lambda', `trigger event of delivery ${delivery} sent to the trigger DLQ after ${tryNo} tries`);
      } else {
        vt.scheduleSystem(retryIn, () => invokeTrigger(delivery, tryNo + 1));
      }
    };
    vt.scheduleSystem(TRIGGER_TIMEOUT_MS, () => fail('trigger timed out'));
    vt.runAs(actor, () => trigger({ jobId: JOB_ID, scheduledTime: SCHEDULED_TIME })).then(
      (result) => {
        if (settled || actor.dead) return;
        settled = true;
        note(actor.name, `returned ${result}`);
        ended(actor);
      },
      (error) => fail(`trigger failed: ${String(error).slice(0, 120)}`),
    );
  }

  let streamTries = 0;
  aws.onRowChange = (before, after) => {
    if (after.status === 'RUNNING')
      out.leaseExpiries.set(String(after.leaseId), Date.parse(String(after.leaseExpiresAt)));
    if (out.finishedAt === undefined && (after.status === 'SUCCEEDED' || after.status === 'FAILED'))
      out.finishedAt = vt.now;
    // The stack's event source filter: only the write that makes a row SUCCEEDED reaches the notifier.
    if (after.status === 'SUCCEEDED' && before?.status !== 'SUCCEEDED') {
      const record = streamEvent(structuredClone(before) as Row, structuredClone(after));
      vt.scheduleSystem(500, () => invokeNotifier(record));
    }
  };
  function invokeNotifier(record: ReturnType<typeof streamEvent>) {
    const actor = newActor('notifier');
    streamTries++;
    note(actor.name, `invoked with the stream record of the change to SUCCEEDED (try ${streamTries})`);
    let settled = false;
    const retry = (why: string) => {
      if (settled) return;
      settled = true;
      kill(actor, why);
      notifierFailures++;
      vt.scheduleSystem(Math.min(60_000, 1000 * 2 ** streamTries), () => invokeNotifier(record));
    };
    vt.scheduleSystem(NOTIFIER_TIMEOUT_MS, () => retry('notifier timed out'));
    vt.runAs(actor, () => notifier(record)).then(
      (response) => {
        if (settled || actor.dead) return;
        if (response.batchItemFailures.length > 0) return retry('batch item failure');
        settled = true;
        note(actor.name, 'returned');
        ended(actor);
      },
      (error) => retry(`notifier threw ${String(error)}`),
    );
  }

  plan.schedulerDeliveries.forEach((offset, i) => vt.scheduleSystem(offset, () => invokeTrigger(i + 1, 1)));

  const uninstall = vt.install();
  try {
    await vt.runUntil(horizon);
  } finally {
    uninstall();
  }
  for (const b of out.beliefs)
    if (b.to === undefined) {
      b.to = vt.now;
      b.end = 'run ended';
    }
  note(
    'sim',
    `run ended: row ${aws.row(JOB_ID, SCHEDULED_TIME)?.status ?? '(none)'}; ${jobQueue.size} message(s) left, ${jobQueue.movedToDlq} in the DLQ`,
  );

  const { skews, ...observed } = out;
  return {
    plan,
    variant: variant.name,
    settings,
    limits,
    trace,
    row: aws.row(JOB_ID, SCHEDULED_TIME),
    objects: aws.objects,
    published: aws.published.length,
    delivered: aws.delivered.length,
    deadlineAt,
    horizon,
    messagesInDlq: jobQueue.movedToDlq,
    skewSpreadMs: skews.length === 0 ? 0 : Math.max(...skews) - Math.min(...skews),
    events: vt.events,
    ...observed,
  };
}

let fake: { aws: FakeAws; time: VirtualTime } | undefined;

/**
 * One FakeAws for the whole process, reset for each run: a new one per run leaves sinon fakes behind (about 0.4 MB
 * a run). Its mocks stay installed on the SDK client classes, which only the simulation uses in its process.
 */
function sharedFakeAws(time: VirtualTime): FakeAws {
  if (fake === undefined) {
    const state: { aws?: FakeAws; time: VirtualTime } = { time };
    state.aws = new FakeAws(() => state.time.now);
    fake = state as { aws: FakeAws; time: VirtualTime };
  }
  fake.time = time;
  fake.aws.reset();
  return fake.aws;
}

let clients: { doc: DynamoDBDocumentClient; s3: S3Client; sqs: SQSClient; sns: SNSClient } | undefined;

/** SDK clients are built once per process (building them is a third of a short run); each run re-routes their send. */
function sdkClients() {
  const credentials = { accessKeyId: 'sim', secretAccessKey: 'sim' };
  return (clients ??= {
    doc: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-central-1', credentials }), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    s3: new S3Client({ region: 'eu-central-1', credentials }),
    sqs: new SQSClient({ region: 'eu-central-1', credentials }),
    sns: new SNSClient({ region: 'eu-central-1', credentials }),
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function sqsEvent(records: { messageId: string; receiptHandle: string; body: string }[]): SQSEvent {
  return { Records: records.map((r) => ({ ...r, eventSource: 'aws:sqs' })) } as unknown as SQSEvent;
}
