/**
 * Drift repair on moto: a bulk create of 1,000 schedules of one job (upsertSchedules), then, behind the registry's
 * back, one schedule deleted, two orphans created in the job's group (one named like the registry's, one made by hand
 * with a name of its own, `hand-made-by-ops`) and one schedule disabled by hand, and one row left as a writer that
 * crashed before its projection leaves it. One reconciler run (the handler, with the registry store, the Scheduler
 * projection and the cursor row on moto) over the two slices concerned (`a`, the registry's buckets a0 to af, and
 * `h`) repairs all of them, counts each by kind, and advances the cursor; the next run over the same slices finds
 * nothing to repair.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  type SchedulerClient,
  UpdateScheduleCommand,
  type UpdateScheduleCommandInput,
} from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoAuditCursorStore } from '../../functions/aws/audit-cursor-store';
import { withDatedTemplates } from '../../functions/aws/dated-templates';
import { DynamoScheduleRegistry } from '../../functions/aws/schedule-registry-store';
import { SchedulerProjection } from '../../functions/aws/scheduler-projection';
import { AUDIT_SLICES } from '../../functions/protocol/audit-slices';
import { MetricName } from '../../functions/protocol/metric-names';
import type { Logger, Metrics, OccurrenceIndex, OccurrenceStore, RequeueStore } from '../../functions/protocol/ports';
import {
  auditBucketOf,
  bucketLabel,
  newRow,
  scheduleNameOf,
  validateScheduleSpec,
} from '../../functions/protocol/schedule-registry';
import { createReconcilerHandler } from '../../functions/reconciler';
import { upsertSchedules } from '../../operations/bulk-schedules';
import { connectScheduleOperations } from '../../operations/schedules';
import { useMoto } from './emulator';
import { createRegistryStores, registryClients, SHARED_GROUP, TABLE, TRIGGER } from './registry-emulator';

const emulator = useMoto();

const JOB = 'weekly-report';
const JOB_GROUP = 'itest-weekly-report';
const COUNT = 1_000;
const keyOf = (i: number) => `customer-${String(i).padStart(4, '0')}`;

let dynamo: DynamoDBClient;
let scheduler: SchedulerClient;

beforeEach(async () => {
  ({ dynamo, scheduler } = registryClients(emulator));
  await createRegistryStores({ dynamo, scheduler }, JOB, JOB_GROUP);
});

async function allSchedules(): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = await scheduler.send(new ListSchedulesCommand({ GroupName: JOB_GROUP, NextToken: token }));
    for (const s of page.Schedules ?? []) states.set(s.Name ?? '', s.State ?? '');
    token = page.NextToken;
  } while (token);
  return states;
}

/** Two keys of the 1,000 whose schedules are in the audit slice `a` (buckets a0 to af). */
function keysInSliceA(): { deleted: string; disabled: string } {
  const keys = Array.from({ length: COUNT }, (_, i) => keyOf(i)).filter((k) => auditBucketOf(k) >> 4 === 0xa);
  if (keys.length < 2) throw new Error('fewer than two keys in slice a');
  return { deleted: keys[0], disabled: keys[1] };
}

describe('drift repair on moto', () => {
  it('bulk-creates 1,000 schedules, then one reconciler run repairs a deleted, an orphaned, a disabled and an unprojected one', async () => {
    const clock = { now: () => Date.now() };
    const ops = connectScheduleOperations({
      registryTableName: TABLE,
      scheduleGroupName: SHARED_GROUP,
      clients: { dynamoDb: dynamo, scheduler },
      clock,
    });
    const items = Array.from({ length: COUNT }, (_, i) => ({
      scheduleKey: keyOf(i),
      expression: 'cron(0 8 ? * MON *)',
      timeZone: 'Europe/Berlin',
      input: { customer: i },
    }));
    const started = Date.now();
    const created = await upsertSchedules(ops, JOB, items, { rate: 1_000, concurrency: 8 });
    const seconds = (Date.now() - started) / 1000;
    console.info(
      `bulk create on moto: ${COUNT} schedules in ${seconds.toFixed(1)} s, ${Math.round(COUNT / seconds)}/s`,
    );
    expect(created).toMatchObject({ total: COUNT, written: COUNT, unchanged: 0, failed: [], nextIndex: COUNT });
    expect((await allSchedules()).size).toBe(COUNT);

    // Drift, behind the registry's back.
    const { deleted, disabled } = keysInSliceA();
    await scheduler.send(new DeleteScheduleCommand({ GroupName: JOB_GROUP, Name: scheduleNameOf(deleted) }));
    const orphan = `${bucketLabel(0xa5)}.stray.0123456789abcdef`;
    const handMade = 'hand-made-by-ops';
    for (const name of [orphan, handMade])
      await scheduler.send(
        new CreateScheduleCommand({
          Name: name,
          GroupName: JOB_GROUP,
          ScheduleExpression: 'rate(1 hour)',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: { Arn: TRIGGER, RoleArn: 'arn:aws:iam::123456789012:role/scheduler', Input: '{}' },
        }),
      );
    const current = await scheduler.send(
      new GetScheduleCommand({ GroupName: JOB_GROUP, Name: scheduleNameOf(disabled) }),
    );
    await scheduler.send(
      new UpdateScheduleCommand({
        ...(current as unknown as UpdateScheduleCommandInput),
        State: 'DISABLED',
      }),
    );
    // A writer that crashed between its row and its projection (a new key, due after the grace).
    const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
    const registry = new DynamoScheduleRegistry(documents, TABLE);
    const spec = validateScheduleSpec(JOB, 'late-1', { expression: 'rate(1 day)' }, Date.now());
    await registry.put(newRow(JOB, 'late-1', spec, Date.now()), undefined);

    // The reconciler, two minutes later (past the writer's grace, and the orphan older than a minute).
    // The walk has `h` right after `a`: start the cursor at `a`, two slices a run.
    const cursor = new DynamoAuditCursorStore(documents, TABLE);
    const sliceA = AUDIT_SLICES.indexOf('a');
    expect(AUDIT_SLICES.slice(sliceA, sliceA + 2)).toEqual(['a', 'h']);
    expect(await cursor.write({ slice: sliceA, cycle: 0 }, undefined)).toBe(true);
    const metrics: Array<{ name: string; jobId: string }> = [];
    const recording: Metrics = { add: (name, _value, jobId) => metrics.push({ name, jobId }) };
    const logger: Logger = { info: () => {}, warn: () => {}, error: (m, f) => console.error(m, f) };
    const reconciler = createReconcilerHandler({
      workers: new Map(),
      thresholds: { unannouncedAfterSeconds: 90_000, maxFixesPerRun: 10 },
      store: {} as OccurrenceStore & RequeueStore,
      index: { async *shardPages() {} } as unknown as OccurrenceIndex,
      announcer: { announce: async () => {} } as never,
      clock: { now: () => Date.now() + 120_000 },
      logger,
      metrics: recording,
      bucketName: 'reports',
      schedules: {
        registry,
        // As the deployed reconciler reads it: templates with their last change (no template changed here).
        projection: withDatedTemplates(new SchedulerProjection(scheduler, SHARED_GROUP), scheduler, SHARED_GROUP),
        cursor,
        jobs: [JOB],
        limits: { auditSlicesPerRun: 2 },
      },
    });

    const runStarted = Date.now();
    const report = await reconciler();
    console.info(
      `one reconciler run on moto (sweep, slices a (~62 schedules) and h, 5 repairs): ${Date.now() - runStarted} ms`,
    );

    const repairs = report.schedules?.repairs ?? [];
    expect(report.schedules?.audited).toEqual([`${JOB}#a`, `${JOB}#h`]);
    expect(repairs.map((r) => [r.kind, r.scheduleKey ?? r.scheduleName]).sort()).toEqual(
      [
        ['sync', 'late-1'],
        ['missing', deleted],
        ['orphan', orphan],
        ['orphan', handMade],
        ['state', disabled],
      ].sort(),
    );
    expect(report.schedules?.errors).toBe(0);
    const after = await allSchedules();
    expect(after.get(scheduleNameOf(deleted))).toBe('ENABLED');
    expect(after.has(orphan)).toBe(false);
    expect(after.has(handMade)).toBe(false);
    expect(after.get(scheduleNameOf(disabled))).toBe('ENABLED');
    expect(after.get(scheduleNameOf('late-1'))).toBe('ENABLED');
    expect(after.size).toBe(COUNT + 1);
    expect(metrics.map((m) => m.name).sort()).toEqual(
      [
        MetricName.SchedulesSyncRepaired,
        MetricName.SchedulesRecreated,
        MetricName.OrphanSchedulesRemoved,
        MetricName.OrphanSchedulesRemoved,
        MetricName.SchedulesDriftCorrected,
      ].sort(),
    );
    expect(await cursor.read()).toMatchObject({ slice: sliceA + 2, cycle: 0, version: 2 });

    // The same slices again: nothing left to repair.
    const stored = await cursor.read();
    await cursor.write({ slice: sliceA, cycle: 0 }, stored?.version);
    const again = await reconciler();
    expect(again.schedules?.repairs).toEqual([]);
    expect(again.schedules?.audited).toHaveLength(2);
  });
});
