/**
 * The late check on moto: a job's fixed schedule is disabled by hand, behind the stack's back (its job-state row says
 * nothing of a pause). The reconciler, as deployed (SCHEDULE_GROUP from its environment, Scheduler and the table on
 * moto), finds the schedule DISABLED, reads the job's newest row, and counts each fire time since then that is past
 * the job's lateAfter as OccurrencesLate under the job's worker. An enabled schedule and a paused job's disabled
 * schedule are not counted.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateScheduleCommand,
  CreateScheduleGroupCommand,
  GetScheduleCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { JOB_STATE_SORT_KEY } from '../../functions/protocol/job-state';
import { isoSeconds } from '../../functions/protocol/occurrence';
import type { Logger, Metrics } from '../../functions/protocol/ports';
import { createReconcilerHandler } from '../../functions/reconciler';
import { ENV } from '../../functions/runtime-env';
import { LOCAL_REGION, LOCAL_WORKER } from '../../testing/local/local-aws';
import { countingJob, JOB_ID, pipeline, testSettings, useMoto, waitForStatus } from './emulator';

const emulator = useMoto();

const GROUP = 'itest-late';
const PAUSED_JOB = 'itest-paused';
const ENABLED_JOB = 'itest-enabled';
const LATE_AFTER = 300;
const FIVE_MINUTES = 300_000;

const clientConfig = () => ({
  endpoint: emulator.moto.endpoint,
  region: LOCAL_REGION,
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

/** A job's schedule as lib/job-schedules.ts deploys it: every 5 minutes, its input with the job's lateAfter. */
async function createSchedule(scheduler: SchedulerClient, jobId: string): Promise<void> {
  await scheduler.send(
    new CreateScheduleCommand({
      Name: jobId,
      GroupName: GROUP,
      ScheduleExpression: 'cron(0/5 * * * ? *)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: 'arn:aws:lambda:us-east-1:123456789012:function:trigger',
        RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
        Input: JSON.stringify({
          jobId,
          scheduledTime: '<aws.scheduler.scheduled-time>',
          worker: LOCAL_WORKER,
          deadlineSeconds: 600,
          retentionDays: 1,
          catchupWindowSeconds: 600,
          lateAfterSeconds: LATE_AFTER,
          overlap: 'skip',
        }),
      },
    }),
  );
}

/** Disable a schedule as someone at the console would: UpdateSchedule with its definition and State DISABLED. */
async function disableByHand(scheduler: SchedulerClient, jobId: string): Promise<void> {
  const s = await scheduler.send(new GetScheduleCommand({ GroupName: GROUP, Name: jobId }));
  await scheduler.send(
    new UpdateScheduleCommand({
      Name: jobId,
      GroupName: GROUP,
      ScheduleExpression: s.ScheduleExpression,
      ScheduleExpressionTimezone: s.ScheduleExpressionTimezone,
      FlexibleTimeWindow: s.FlexibleTimeWindow,
      Target: s.Target,
      State: 'DISABLED',
    }),
  );
}

const savedGroup = process.env[ENV.scheduleGroup];
afterEach(() => {
  if (savedGroup === undefined) delete process.env[ENV.scheduleGroup];
  else process.env[ENV.scheduleGroup] = savedGroup;
});

describe('late occurrences on moto', () => {
  it('counts the fire times of a schedule disabled behind the stack back as OccurrencesLate of its worker', async () => {
    const p = await pipeline(emulator, { jobs: { [JOB_ID]: countingJob() }, settings: [testSettings()] });
    const scheduler = new SchedulerClient(clientConfig());
    await scheduler.send(new CreateScheduleGroupCommand({ Name: GROUP }));
    for (const job of [JOB_ID, PAUSED_JOB, ENABLED_JOB]) await createSchedule(scheduler, job);
    // The job's first fire time after its schedule was created ran, as it would have.
    const created = (await scheduler.send(new GetScheduleCommand({ GroupName: GROUP, Name: JOB_ID }))).CreationDate!;
    const first = Math.ceil((created.getTime() + 1) / FIVE_MINUTES) * FIVE_MINUTES;
    const ran = { jobId: JOB_ID, scheduledTime: isoSeconds(first) };
    p.start();
    try {
      await p.fire([ran]);
      await waitForStatus(p, ran, ['SUCCEEDED']);
    } finally {
      await p.stop();
    }
    // Then someone disabled two schedules by hand; the second job was paused by an operator (its state row says so).
    await disableByHand(scheduler, JOB_ID);
    await disableByHand(scheduler, PAUSED_JOB);
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient(clientConfig()));
    await documents.send(
      new PutCommand({
        TableName: p.resources.tableName,
        Item: {
          jobId: PAUSED_JOB,
          scheduledTime: JOB_STATE_SORT_KEY,
          pausedAt: isoSeconds(first),
          pauseCause: 'operator',
        },
      }),
    );

    // 27 minutes after the occurrence that ran: the fire times 5, 10, 15 and 20 minutes after it are past lateAfter
    // (5 minutes); the one at 25 minutes is not yet.
    process.env[ENV.scheduleGroup] = GROUP;
    const late: { worker: string; value: number }[] = [];
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const record = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields });
    const logger: Logger = { info: record, warn: record, error: record };
    const reconciler = createReconcilerHandler({
      thresholds: { unannouncedAfterSeconds: 90_000, maxFixesPerRun: 10 },
      logger,
      clock: { now: () => first + 27 * 60_000 },
      workerMetrics: (worker): Metrics => ({
        add: (name, value) => {
          if (name === 'OccurrencesLate') late.push({ worker, value });
        },
      }),
    });
    const report = await reconciler();

    expect(report.late).toBe(4);
    expect(late).toEqual([{ worker: LOCAL_WORKER, value: 4 }]);
    const lateLines = lines.filter((l) => l.message.startsWith('occurrence is late'));
    expect(lateLines.map((l) => [l.fields?.jobId, l.fields?.scheduledTime, l.fields?.cause])).toEqual(
      [5, 10, 15, 20].map((m) => [JOB_ID, isoSeconds(first + m * 60_000), 'no-occurrence']),
    );
  });
});
