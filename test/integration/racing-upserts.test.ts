/**
 * Upserts of one key racing, on moto: the real registry store and Scheduler projection, the callers'
 * interleaving made deterministic. moto applies a conditional write and its check in two steps, so two writes in
 * flight at once may both pass their check, which DynamoDB never allows: here every registry write goes through one
 * queue (one in flight at a time, as DynamoDB's own serialization of one item gives), and every caller's first read
 * waits until all have read, so that they all start from the same version: the worst race. The jitter comes from a
 * seeded source.
 *
 * Different specs: no caller throws, each is told created or updated, the row holds the last write and its schedule
 * matches it, in sync. The same spec: one created; every caller told `unchanged` made no write at all, in the
 * registry or in Scheduler; the others say `repaired` (they put the schedule a racing writer had not confirmed yet).
 */
import { GetScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoScheduleRegistry } from '../../functions/aws/schedule-registry-store';
import { SchedulerProjection } from '../../functions/aws/scheduler-projection';
import {
  type ManageScheduleDeps,
  type UpsertResult,
  upsertScheduleRecord,
} from '../../functions/protocol/manage-schedule';
import { scheduleNameOf } from '../../functions/protocol/schedule-registry';
import type { ScheduleProjection, ScheduleRegistry } from '../../functions/protocol/schedule-registry-ports';
import { useMoto } from './emulator';
import { createRegistryStores, registryClients, SHARED_GROUP, TABLE } from './registry-emulator';

const emulator = useMoto();

const JOB = 'weekly-report';
const JOB_GROUP = 'itest-weekly-report';
const KEY = 'customer-42';
const CALLERS = 10;
const WEEKLY = { expression: 'cron(0 8 ? * MON *)', timeZone: 'Europe/Berlin' };

let registry: DynamoScheduleRegistry;
let projection: SchedulerProjection;
let scheduler: SchedulerClient;

beforeEach(async () => {
  const clients = registryClients(emulator);
  scheduler = clients.scheduler;
  await createRegistryStores(clients, JOB, JOB_GROUP);
  const documents = DynamoDBDocumentClient.from(clients.dynamo, { marshallOptions: { removeUndefinedValues: true } });
  registry = new DynamoScheduleRegistry(documents, TABLE);
  projection = new SchedulerProjection(scheduler, SHARED_GROUP);
});

/** Each caller's writes, by kind. */
type Writes = Record<string, number>;

/** The callers' deps: one write queue, a barrier on the first reads, each caller's writes counted. */
function racingCallers(count: number): {
  callers: { deps: ManageScheduleDeps; writes: Writes }[];
  /** The callers whose put was written, in the order the table applied them. */
  applied: number[];
  /** Conditional puts sent, applied or refused. */
  attempts: () => number;
} {
  const applied: number[] = [];
  let attempts = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(call: () => Promise<T>): Promise<T> => {
    const result = queue.then(call);
    queue = result.catch(() => undefined);
    return result;
  };
  let read = 0;
  let allRead: () => void = () => {};
  const everyoneHasRead = new Promise<void>((resolve) => {
    allRead = resolve;
  });
  let seed = 34_034;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const callers = Array.from({ length: count }, (_, caller) => {
    const writes: Writes = {};
    const count = (kind: string) => {
      writes[kind] = (writes[kind] ?? 0) + 1;
    };
    let firstRead = true;
    const callerRegistry: ScheduleRegistry = Object.create(registry);
    Object.assign(callerRegistry, {
      get: async (...args: Parameters<ScheduleRegistry['get']>) => {
        const row = await registry.get(...args);
        if (firstRead) {
          firstRead = false;
          if (++read === CALLERS) allRead();
          await everyoneHasRead;
        }
        return row;
      },
      put: (...args: Parameters<ScheduleRegistry['put']>) => {
        attempts++;
        return oneAtATime(async () => {
          const result = await registry.put(...args);
          // A refused put wrote nothing: only an applied one is a write.
          if (result.written) {
            applied.push(caller);
            count('put');
          }
          return result;
        });
      },
      markSynced: (...args: Parameters<ScheduleRegistry['markSynced']>) => {
        count('markSynced');
        return oneAtATime(() => registry.markSynced(...args));
      },
      remove: (...args: Parameters<ScheduleRegistry['remove']>) => {
        count('remove');
        return oneAtATime(() => registry.remove(...args));
      },
    });
    const callerProjection: ScheduleProjection = {
      template: (jobId) => projection.template(jobId),
      put: (row, template) => {
        count('UpdateSchedule');
        return projection.put(row, template);
      },
      remove: (template, name) => {
        count('DeleteSchedule');
        return projection.remove(template, name);
      },
      listPage: (template, prefix, token) => projection.listPage(template, prefix, token),
    };
    const deps: ManageScheduleDeps = {
      registry: callerRegistry,
      projection: callerProjection,
      clock: { now: () => Date.now() },
      random,
    };
    return { deps, writes };
  });
  return { callers, applied, attempts: () => attempts };
}

const inputOf = async () =>
  JSON.parse(
    (await scheduler.send(new GetScheduleCommand({ GroupName: JOB_GROUP, Name: scheduleNameOf(KEY) }))).Target?.Input ??
      '{}',
  );

describe('upserts of one key racing, on moto', () => {
  it(`${CALLERS} callers with ${CALLERS} specs: none throws, the last writer wins, one schedule in sync`, async () => {
    const { callers, applied, attempts } = racingCallers(CALLERS);
    const results: UpsertResult[] = await Promise.all(
      callers.map(({ deps }, i) => upsertScheduleRecord(deps, JOB, KEY, { ...WEEKLY, input: { caller: i } })),
    );

    expect(results.map((r) => r.outcome).sort()).toEqual(['created', ...Array(CALLERS - 1).fill('updated')]);
    const row = await registry.get(JOB, KEY, true);
    expect(row).toMatchObject({ version: CALLERS, syncedVersion: CALLERS });
    expect(row?.syncDueAt).toBeUndefined();
    // Each caller's spec written once, in some order; the row and its schedule hold the last one.
    expect([...applied].sort((a, b) => a - b)).toEqual(callers.map((_, i) => i));
    expect(row?.input).toEqual({ caller: applied.at(-1) });
    expect((await inputOf()).input).toEqual(row?.input);
    console.info(`${CALLERS} racing upserts on moto: ${attempts()} conditional puts for ${CALLERS} writes`);
  });

  it(`${CALLERS} callers with one spec: one created; a caller told unchanged wrote nothing anywhere`, async () => {
    const { callers } = racingCallers(CALLERS);
    const results = await Promise.all(callers.map(({ deps }) => upsertScheduleRecord(deps, JOB, KEY, WEEKLY)));

    const outcomes = results.map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1);
    expect(outcomes.every((o) => o === 'created' || o === 'repaired' || o === 'unchanged')).toBe(true);
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome === 'unchanged') expect(callers[i]?.writes, `caller ${i}`).toEqual({});
      if (outcome === 'repaired') expect(callers[i]?.writes.put, `caller ${i}`).toBeUndefined();
    }
    expect(await registry.get(JOB, KEY, true)).toMatchObject({ version: 1, syncedVersion: 1 });
    console.info(`one spec, ${CALLERS} callers on moto: ${outcomes.join(', ')}`);
  });
});
