/**
 * Where the CLI finds what it works on (bin/occurrences/target.ts): the stack's outputs as a ScheduledJobs adds them
 * (lib/stack-outputs.ts), the flags that replace them, and the messages when something needed is missing. On the
 * emulator, with a stack that has only outputs.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../bin/occurrences/program';
import { outputsOf, queueFor, resolveTarget, type Target } from '../../bin/occurrences/target';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import {
  cliDeps,
  createStack,
  GROUP,
  HOURLY,
  hourlyJob,
  messagesIn,
  OTHER,
  OTHER_WORKER,
  otherJob,
  putRows,
  row,
  useCliEmulator,
  WORKER,
} from './support';

const STACK = 'OpsStack';

const emulator = useCliEmulator({ deployed: true });

/** The outputs a ScheduledJobs with the two test jobs, each on its own worker, adds to its stack. */
async function createJobsStack(): Promise<void> {
  await createStack(emulator.moto.endpoint, STACK, {
    OccurrenceTableName: emulator.resources.tableName,
    ReportBucketName: emulator.resources.bucketName,
    ScheduleGroupName: GROUP,
    AlarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:alarms',
    WorkerQueue1: { value: emulator.resources.jobQueueUrl, description: WORKER },
    WorkerQueue2: { value: emulator.otherQueueUrl, description: OTHER_WORKER },
  });
}

const everything = { jobs: true, queues: true, bucket: true };

/** Sends one message through the queue the target has for `job`'s worker; returns what is in each queue. */
async function sendThrough(target: Target, job = hourlyJob) {
  if (target.queues === undefined) throw new Error('no queues');
  await queueFor(target.queues, job).send(encodeEnvelope({ jobId: job.id, scheduledTime: '2026-11-30T06:00:00Z' }));
  return {
    worker: await messagesIn(emulator.clients, emulator.resources.jobQueueUrl),
    other: await messagesIn(emulator.clients, emulator.otherQueueUrl),
  };
}

describe('Function: resolveTarget', () => {
  it('reads the table, bucket, schedule group and every worker queue from the stack outputs', async () => {
    await createJobsStack();

    const target = await resolveTarget({ stack: STACK, endpoint: emulator.moto.endpoint }, everything, {});

    expect([target.tableName, target.bucketName, target.jobs?.group]).toEqual([
      emulator.resources.tableName,
      emulator.resources.bucketName,
      GROUP,
    ]);
    expect(await target.jobs?.job(OTHER)).toEqual(otherJob);
    expect([...(target.queues?.byWorker.keys() ?? [])]).toEqual([WORKER, OTHER_WORKER]);
    expect(target.queues?.source).toBe(`stack ${STACK}'s outputs`);
    const sent = await sendThrough(target, otherJob);
    expect(sent).toEqual({ worker: [], other: [expect.objectContaining({ jobId: OTHER })] });
  });

  it("--worker-queue names a worker's queue instead of its output", async () => {
    await createJobsStack();
    const workerQueues = new Map([[WORKER, emulator.otherQueueUrl]]);

    const target = await resolveTarget(
      { stack: STACK, endpoint: emulator.moto.endpoint, workerQueues },
      everything,
      {},
    );

    expect(target.queues?.source).toBe(`stack ${STACK}'s outputs and --worker-queue`);
    expect(await sendThrough(target)).toEqual({ worker: [], other: [expect.objectContaining({ jobId: HOURLY })] });
  });

  it('needs no stack when the flags name everything', async () => {
    // The default stack, ScheduledJobs, does not exist here: it is not read.
    const target = await resolveTarget(
      {
        table: emulator.resources.tableName,
        scheduleGroup: GROUP,
        workerQueues: new Map([[WORKER, emulator.resources.jobQueueUrl]]),
        endpoint: emulator.moto.endpoint,
      },
      { jobs: true, queues: true },
      {},
    );

    expect(await target.jobs?.job(HOURLY)).toEqual(hourlyJob);
    expect(target.queues?.source).toBe('--worker-queue');
    expect(await sendThrough(target)).toEqual({ worker: [expect.objectContaining({ jobId: HOURLY })], other: [] });
  });

  it('reads neither the schedule group nor the queues for a command that needs no jobs', async () => {
    await createStack(emulator.moto.endpoint, STACK, { OccurrenceTableName: emulator.resources.tableName });

    const target = await resolveTarget({ stack: STACK, endpoint: emulator.moto.endpoint }, {}, {});

    expect(target).toMatchObject({ tableName: emulator.resources.tableName, jobs: undefined, queues: undefined });
  });

  it.each<[string, object, string]>([
    [
      'the schedule group',
      { jobs: true },
      `the jobs' schedule group is unknown: stack ${STACK} has no output ScheduleGroupName; ` +
        'pass --schedule-group or --stack',
    ],
    [
      'the worker queues',
      { queues: true },
      `the worker queues are unknown: stack ${STACK} has no output WorkerQueue<n>; ` +
        'pass --worker-queue <workerId>=<queue URL> or --stack',
    ],
  ])('says which output is missing: %s', async (_, needs, message) => {
    await createStack(emulator.moto.endpoint, STACK, { OccurrenceTableName: emulator.resources.tableName });

    await expect(resolveTarget({ stack: STACK, endpoint: emulator.moto.endpoint }, needs, {})).rejects.toThrow(message);
  });

  it('names the flags that would do without a stack that does not exist', async () => {
    await expect(
      resolveTarget({ table: 't', endpoint: emulator.moto.endpoint }, { jobs: true, queues: true }, {}),
    ).rejects.toThrow(
      'stack ScheduledJobs does not exist in this account and region; pass --stack <name>, or ' +
        '--schedule-group and --worker-queue',
    );
  });
});

describe('Function: outputsOf', () => {
  it('takes a worker queue from each WorkerQueue<n> output that names its worker', () => {
    const outputs = outputsOf([
      { OutputKey: 'OccurrenceTableName', OutputValue: 'occurrences' },
      { OutputKey: 'WorkerQueue1', OutputValue: 'https://sqs/1/a', Description: 'a' },
      { OutputKey: 'WorkerQueue12', OutputValue: 'https://sqs/1/b', Description: 'b' },
      // Not a worker queue of a ScheduledJobs: no worker id, or another key.
      { OutputKey: 'WorkerQueue3', OutputValue: 'https://sqs/1/c' },
      { OutputKey: 'WorkerQueueUrl', OutputValue: 'https://sqs/1/d', Description: 'd' },
      { OutputKey: 'Empty' },
    ]);

    expect(outputs.workerQueues).toEqual(
      new Map([
        ['a', 'https://sqs/1/a'],
        ['b', 'https://sqs/1/b'],
      ]),
    );
    expect(outputs.values).toMatchObject({ OccurrenceTableName: 'occurrences', WorkerQueue3: 'https://sqs/1/c' });
    expect(outputs.values).not.toHaveProperty('Empty');
  });
});

describe('the CLI on a deployed stack', () => {
  it('retries an occurrence knowing only the stack: its job from the schedule, its queue from the outputs', async () => {
    await createJobsStack();
    await putRows(emulator.clients, emulator.resources.tableName, [
      row(OTHER, '2026-11-30T05:30:00Z', OccurrenceStatus.FAILED, Date.now()),
    ]);
    const deps = cliDeps({ now: () => Date.now() });

    const code = await runCli(
      ['retry', OTHER, '2026-11-30T05:30:00Z', '--stack', STACK, '--endpoint', emulator.moto.endpoint],
      deps,
    );

    expect(deps.captured.err).toEqual([]);
    expect(code).toBe(0);
    expect(await messagesIn(emulator.clients, emulator.otherQueueUrl)).toEqual([
      JSON.parse(encodeEnvelope({ jobId: OTHER, scheduledTime: '2026-11-30T05:30:00Z' })),
    ]);
    expect(await messagesIn(emulator.clients, emulator.resources.jobQueueUrl)).toEqual([]);
  });
});
