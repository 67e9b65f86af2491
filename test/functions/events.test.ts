import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { PutEventsClient, PutEventsInput, PutEventsOutput } from '../../functions/aws/event-publisher';
import { createEventsHandler } from '../../functions/events';
import { captureLogger, type LogLine } from '../support/harness';

const STREAM_ARN = 'arn:aws:dynamodb:eu-central-1:123456789012:table/Occurrences/stream/2026-11-30T00:00:00.000';
const BUS = 'arn:aws:events:eu-central-1:123456789012:event-bus/ops';

interface Row {
  readonly [field: string]: unknown;
}
const occurrence = (n: number, status: string): Row => ({
  jobId: 'digest',
  scheduledTime: `2026-11-30T${String(n).padStart(2, '0')}:00:00Z`,
  status,
  attempt: 1,
  deadlineAt: 'x',
  createdAt: 'x',
  ttl: 1,
  ...(status === 'SUCCEEDED' ? { reportKey: `reports/digest/${n}.txt`, succeededAt: '2026-11-30T06:01:00.000Z' } : {}),
  ...(status === 'FAILED' ? { lastError: 'boom', failedAt: '2026-11-30T06:01:00.000Z' } : {}),
});

let sequence = 0;
function record(before: Row | undefined, after: Row): DynamoDBRecord {
  return {
    eventName: before === undefined ? 'INSERT' : 'MODIFY',
    eventSource: 'aws:dynamodb',
    eventSourceARN: STREAM_ARN,
    dynamodb: {
      SequenceNumber: String(++sequence),
      ApproximateCreationDateTime: 1_796_018_460,
      NewImage: marshall(after, { removeUndefinedValues: true }) as never,
      ...(before === undefined ? {} : { OldImage: marshall(before) as never }),
    },
  };
}
/** n records, each an occurrence that went from RUNNING to FAILED. */
const failures = (n: number) =>
  Array.from({ length: n }, (_, i) => record(occurrence(i, 'RUNNING'), occurrence(i, 'FAILED')));

type Answer = (input: PutEventsInput) => PutEventsOutput | Error;
/** A PutEvents that records each call and answers from the script, then puts everything. */
function fakeBus(...script: Answer[]): PutEventsClient & { calls: PutEventsInput[]; put: string[] } {
  const calls: PutEventsInput[] = [];
  const put: string[] = [];
  return {
    calls,
    put,
    async putEvents(input) {
      calls.push(input);
      const answer = (script.shift() ?? allPut)(input);
      if (answer instanceof Error) throw answer;
      answer.Entries?.forEach((e, i) => {
        if (e.EventId !== undefined) put.push(JSON.parse(input.Entries[i].Detail).scheduledTime);
      });
      return answer;
    },
  };
}
const allPut: Answer = (input) => ({
  FailedEntryCount: 0,
  Entries: input.Entries.map((_, i) => ({ EventId: `e${i}` })),
});
/** Every entry put except the ones at these positions, which fail with this code. */
const failing =
  (code: string, ...at: number[]): Answer =>
  (input) => ({
    FailedEntryCount: at.length,
    Entries: input.Entries.map((_, i) =>
      at.includes(i) ? { ErrorCode: code, ErrorMessage: `${code} here` } : { EventId: `e${i}` },
    ),
  });
const sdkError = (name: string, status: number) =>
  Object.assign(new Error(`${name} says no`), { name, $metadata: { httpStatusCode: status } });

function handlerWith(bus: PutEventsClient, logs: LogLine[] = []) {
  const waits: number[] = [];
  const handler = createEventsHandler({
    client: bus,
    eventBusName: BUS,
    bucketName: 'reports-bucket',
    logger: captureLogger(logs),
    sleep: async (ms) => void waits.push(ms),
  });
  return { handler, waits };
}
const failedIds = (res: { batchItemFailures: { itemIdentifier: string }[] }) =>
  res.batchItemFailures.map((f) => f.itemIdentifier);

describe('events handler', () => {
  it('puts one event per terminal transition on the given bus, in order, ten to a call', async () => {
    const bus = fakeBus();
    const records = failures(12);
    const res = await handlerWith(bus).handler({ Records: records });

    expect(failedIds(res)).toEqual([]);
    expect(bus.calls.map((c) => c.Entries.length)).toEqual([10, 2]);
    const entry = bus.calls[0].Entries[0];
    expect(entry).toMatchObject({
      Source: 'scheduled-jobs-stack',
      DetailType: 'Occurrence State Change',
      EventBusName: BUS,
    });
    expect(entry.Time.toISOString()).toBe('2026-11-30T06:01:00.000Z');
    expect(JSON.parse(entry.Detail)).toMatchObject({
      version: '1',
      jobId: 'digest',
      status: 'FAILED',
      previousStatus: 'RUNNING',
    });
    expect(bus.put).toEqual(records.map((_, i) => occurrence(i, 'FAILED').scheduledTime));
  });

  it('makes no call for a batch with no transition in it', async () => {
    const bus = fakeBus();
    const res = await handlerWith(bus).handler({
      Records: [
        record(occurrence(1, 'PENDING'), occurrence(1, 'RUNNING')),
        record(undefined, occurrence(2, 'PENDING')),
      ],
    });
    expect(failedIds(res)).toEqual([]);
    expect(bus.calls).toEqual([]);
  });

  it('reports a malformed record in the log and publishes the rest of the batch', async () => {
    const bus = fakeBus();
    const logs: LogLine[] = [];
    const broken = record(occurrence(2, 'RUNNING'), { ...occurrence(2, 'SUCCEEDED'), reportKey: undefined });
    const records = [...failures(2), broken, record(occurrence(3, 'RUNNING'), occurrence(3, 'FAILED'))];
    const res = await handlerWith(bus, logs).handler({ Records: records });

    expect(failedIds(res)).toEqual([]);
    expect(bus.put).toEqual([0, 1, 3].map((i) => occurrence(i, 'FAILED').scheduledTime));
    expect(logs.filter((l) => l.level === 'ERROR')).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({
          sequenceNumber: broken.dynamodb?.SequenceNumber,
          problem: 'SUCCEEDED without a reportKey',
        }),
      }),
    ]);
  });

  it('retries only the entries that failed transiently, and re-sends none that was put', async () => {
    const bus = fakeBus(failing('ThrottlingException', 1, 3), failing('InternalFailure', 0));
    const { handler, waits } = handlerWith(bus);
    const records = failures(4);
    const res = await handler({ Records: records });

    expect(failedIds(res)).toEqual([]);
    expect(bus.calls.map((c) => c.Entries.map((e) => JSON.parse(e.Detail).scheduledTime))).toEqual([
      records.map((_, i) => occurrence(i, 'FAILED').scheduledTime),
      [1, 3].map((i) => occurrence(i, 'FAILED').scheduledTime),
      [1].map((i) => occurrence(i, 'FAILED').scheduledTime),
    ]);
    expect(bus.put.sort()).toEqual(records.map((_, i) => occurrence(i, 'FAILED').scheduledTime));
    expect(waits).toEqual([100, 200]);
  });

  it('hands a fatal entry failure to the stream at once: that record and every one after it, none before', async () => {
    const bus = fakeBus(failing('AccessDeniedException', 2));
    const logs: LogLine[] = [];
    const records = failures(5);
    const res = await handlerWith(bus, logs).handler({ Records: records });

    expect(bus.calls).toHaveLength(1);
    expect(failedIds(res)).toEqual(records.slice(2).map((r) => r.dynamodb?.SequenceNumber));
    expect(logs.find((l) => l.level === 'ERROR')?.fields).toMatchObject({
      kind: 'fatal',
      code: 'AccessDeniedException',
      put: 2,
    });
  });

  it('hands a transient failure to the stream once its retries are spent, and puts no later chunk', async () => {
    const throttled = failing('ThrottlingException', 0);
    const bus = fakeBus(allPut, throttled, throttled, throttled);
    const records = failures(15);
    const res = await handlerWith(bus).handler({ Records: records });

    expect(bus.calls.map((c) => c.Entries.length)).toEqual([10, 5, 1, 1]);
    expect(failedIds(res)).toEqual(records.slice(10).map((r) => r.dynamodb?.SequenceNumber));
    expect(bus.put).toHaveLength(14);
  });

  it('classifies a failed call: a 5xx is retried, a validation error is handed to the stream without a retry', async () => {
    const recovered = fakeBus(() => sdkError('ServiceUnavailableException', 503));
    expect(failedIds(await handlerWith(recovered).handler({ Records: failures(2) }))).toEqual([]);
    expect(recovered.calls).toHaveLength(2);

    const refused = fakeBus(() => sdkError('ValidationException', 400));
    const records = failures(2);
    const res = await handlerWith(refused).handler({ Records: records });
    expect(refused.calls).toHaveLength(1);
    expect(failedIds(res)).toEqual(records.map((r) => r.dynamodb?.SequenceNumber));
  });

  it('tries again an entry the response says nothing about', async () => {
    const bus = fakeBus(() => ({ FailedEntryCount: 0, Entries: [{ EventId: 'e0' }] }));
    expect(failedIds(await handlerWith(bus).handler({ Records: failures(2) }))).toEqual([]);
    expect(bus.calls.map((c) => c.Entries.length)).toEqual([2, 1]);
  });

  it('reports a record from anything but a table stream as malformed, since its links cannot be made', async () => {
    const bus = fakeBus();
    const logs: LogLine[] = [];
    const [stray, good] = failures(2);
    const res = await handlerWith(bus, logs).handler({
      Records: [{ ...stray, eventSourceARN: 'arn:aws:kinesis:x' }, good],
    });
    expect(failedIds(res)).toEqual([]);
    expect(bus.put).toEqual([occurrence(1, 'FAILED').scheduledTime]);
    expect(logs.find((l) => l.level === 'ERROR')?.fields.problem).toBe(
      'eventSourceARN arn:aws:kinesis:x is not a table stream',
    );
  });
});
