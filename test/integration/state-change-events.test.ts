/**
 * State-change events end to end on moto: the real trigger and worker write a real table; its stream's records are
 * played (testing/local/stream-event-source.ts, as the notifier's are), through the event source's filter as the
 * stack synthesizes it, to the events handler, which puts them with the SDK's EventBridgeClient on a moto bus; a rule
 * routes them to an SQS queue, and the test reads them from there.
 */

import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { sdkPutEventsClient } from '../../functions/aws/event-publisher';
import { createEventsHandler } from '../../functions/events';
import type { OccurrenceKey } from '../../functions/protocol/occurrence';
import { stateChangeFilters } from '../../lib/state-change-events';
import type { LocalPipeline } from '../../scripts/local/pipeline';
import { passesFilters } from '../../testing/local/event-filter';
import { LOCAL_REGION } from '../../testing/local/local-aws';
import { StreamEventSource } from '../../testing/local/stream-event-source';
import { enabledSchedule, JOB_ID, jobByTime, pipeline, testSettings, useMoto } from './emulator';

const emulator = useMoto();
const SETTLE_MS = 30_000;
const BUS = 'ops-events';

interface DeliveredEvent {
  readonly id: string;
  readonly source: string;
  readonly 'detail-type': string;
  readonly time: string;
  readonly detail: Record<string, unknown>;
}

/** The SDK's client, on moto. */
function motoEventBridge(): EventBridgeClient {
  return new EventBridgeClient({
    endpoint: emulator.moto.endpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/** A bus, a rule for everything this stack puts, and a queue the rule targets. */
async function routeToQueue(sqs: SQSClient) {
  const bridge = motoEventBridge();
  const queue = await sqs.send(new CreateQueueCommand({ QueueName: 'job-events' }));
  const queueUrl = queue.QueueUrl ?? '';
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const { EventBusArn } = await bridge.send(new CreateEventBusCommand({ Name: BUS }));
  await bridge.send(
    new PutRuleCommand({
      Name: 'job-events',
      EventBusName: BUS,
      EventPattern: JSON.stringify({ source: ['scheduled-jobs-stack'] }),
    }),
  );
  await bridge.send(
    new PutTargetsCommand({
      Rule: 'job-events',
      EventBusName: BUS,
      Targets: [{ Id: 'queue', Arn: attributes.Attributes?.QueueArn }],
    }),
  );
  const drain = async (): Promise<DeliveredEvent[]> => {
    const events: DeliveredEvent[] = [];
    for (;;) {
      const page = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
      if ((page.Messages ?? []).length === 0) return events;
      for (const m of page.Messages ?? []) {
        events.push(JSON.parse(m.Body ?? '{}'));
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      }
    }
  };
  return { bridge, busArn: String(EventBusArn), drain };
}

/** The events handler behind the stack's stream filter, on the pipeline's table stream, as Lambda would run it. */
function eventsSource(p: LocalPipeline, bridge: EventBridgeClient, busArn: string, errors: string[] = []) {
  const handler = createEventsHandler({
    client: sdkPutEventsClient(bridge),
    eventBusName: busArn,
    bucketName: p.resources.bucketName,
    logger: { info: () => {}, warn: () => {}, error: (m, f) => errors.push(JSON.stringify({ m, ...f })) },
  });
  const patterns = stateChangeFilters().map((f) => JSON.parse(String(f.pattern)));
  const filtered = { records: 0 };
  const source = new StreamEventSource({
    streams: p.clients.streams,
    streamArn: p.resources.streamArn,
    batchSize: 100,
    maxRetries: 1,
    handler: async (event: DynamoDBStreamEvent) => {
      const passed = event.Records.filter((r: DynamoDBRecord) => passesFilters(r, patterns));
      filtered.records += passed.length;
      return passed.length === 0 ? { batchItemFailures: [] } : handler({ Records: passed });
    },
  });
  /** Read the stream from its start to its end. */
  const playAll = async () => {
    while ((await source.drainOnce()) > 0) {}
  };
  return { source, playAll, filtered };
}

/** Whole-second times a few seconds in the past, in order. */
function times(count: number): OccurrenceKey[] {
  const base = Math.floor(Date.now() / 1000) * 1000 - 10_000;
  return Array.from({ length: count }, (_, i) => ({
    jobId: JOB_ID,
    scheduledTime: new Date(base + i * 1000).toISOString().replace('.000Z', 'Z'),
  }));
}

describe('state-change events on moto', () => {
  it('routes one event per final transition and one for the self-pause through a rule to a queue, and a replayed stream adds only equal eventIds', async () => {
    await enabledSchedule(emulator.moto.endpoint, 'itest-events');
    const [ok, first, second, afterPause] = times(4);
    const failing = new Set([first.scheduledTime, second.scheduledTime]);
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: jobByTime({}, failing, 50) },
      settings: [testSettings({ pauseAfterFailures: 2, retry: { maxAttempts: 1 } })],
    });
    const { bridge, busArn, drain } = await routeToQueue(p.clients.sqs);
    p.start();
    for (const key of [ok, first, second]) {
      await p.fire([key]);
      await p.waitUntilSettled([key], SETTLE_MS);
    }
    // The pause is written after the second FAILED; a fire after it is SKIPPED as paused.
    for (let i = 0; i < 50 && !(await isPaused(p)); i++) await new Promise((r) => setTimeout(r, 100));
    await p.fire([afterPause]);
    const [skipped] = await p.waitUntilSettled([afterPause], SETTLE_MS);
    await p.stop();
    expect(skipped).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });

    const events = eventsSource(p, bridge, busArn);
    await events.playAll();
    const delivered = await drain();

    const summary = delivered
      .map((e) => `${e['detail-type']} ${e.detail.scheduledTime ?? e.detail.jobId} ${e.detail.status ?? ''}`.trim())
      .sort();
    expect(summary).toEqual(
      [
        `Occurrence State Change ${ok.scheduledTime} SUCCEEDED`,
        `Occurrence State Change ${first.scheduledTime} FAILED`,
        `Occurrence State Change ${second.scheduledTime} FAILED`,
        `Occurrence State Change ${afterPause.scheduledTime} SKIPPED`,
        `Job Paused ${JOB_ID}`,
      ].sort(),
    );
    expect(events.filtered.records).toBe(5);
    for (const e of delivered) {
      expect(e.source).toBe('scheduled-jobs-stack');
      expect(e.detail.version).toBe('1');
    }
    const succeeded = delivered.find((e) => e.detail.status === 'SUCCEEDED');
    expect(succeeded?.detail).toMatchObject({
      jobId: JOB_ID,
      previousStatus: 'RUNNING',
      attempt: 1,
      report: { uri: expect.stringMatching(new RegExp(`^s3://${p.resources.bucketName}/reports/${JOB_ID}/`)) },
    });
    expect(succeeded?.time).toBe(String(succeeded?.detail.at).replace(/\.\d{3}Z$/, 'Z'));
    const paused = delivered.find((e) => e['detail-type'] === 'Job Paused');
    expect(paused?.detail).toMatchObject({ cause: 'failures', pausedBy: 'pauseAfterFailures', consecutiveFailures: 2 });
    const failed = delivered.find((e) => e.detail.scheduledTime === first.scheduledTime);
    expect(failed?.detail).toMatchObject({ error: expect.stringContaining('upstream down') });

    // The stream redelivers (a crash, a timeout): every event comes again with the id it had, for consumers to drop.
    const replay = eventsSource(p, bridge, busArn);
    await replay.playAll();
    const again = await drain();
    expect(again.map((e) => e.detail.eventId).sort()).toEqual(delivered.map((e) => e.detail.eventId).sort());
    expect(new Set(delivered.map((e) => e.detail.eventId)).size).toBe(5);
  });
});

async function isPaused(p: LocalPipeline): Promise<boolean> {
  const out = await p.clients.documents.send(
    new GetCommand({
      TableName: p.resources.tableName,
      Key: { jobId: JOB_ID, scheduledTime: '#job' },
      ConsistentRead: true,
    }),
  );
  return out.Item?.pausedAt !== undefined;
}

describe('state-change events on moto, when the bus refuses them', () => {
  it('puts nothing past the refused record, hands it to the stream, and a later replay puts every event once', async () => {
    const [a, b] = times(2);
    const p = await pipeline(emulator, {
      jobs: { [JOB_ID]: jobByTime({}, new Set([b.scheduledTime]), 50) },
      settings: [testSettings({ retry: { maxAttempts: 1 } })],
    });
    p.start();
    // One after the other: fired together, the second would be SKIPPED for overlap (the default policy).
    for (const key of [a, b]) {
      await p.fire([key]);
      await p.waitUntilSettled([key], SETTLE_MS);
    }
    await p.stop();
    const bridge = motoEventBridge();
    const missingBus = `arn:aws:events:${LOCAL_REGION}:123456789012:event-bus/${BUS}`;

    const errors: string[] = [];
    const refused = eventsSource(p, bridge, missingBus, errors);
    await refused.playAll();
    // Lambda's source retries (here once) and gives up: every record from the refused one on is left undelivered.
    expect(refused.source.totals.failedRecords).toBeGreaterThan(0);
    expect(errors).toHaveLength(2);
    expect(JSON.parse(errors[0])).toMatchObject({
      m: 'state-change event not put; the stream retries from its record',
      kind: 'fatal',
      put: 0,
    });

    const { drain } = await routeToQueue(p.clients.sqs);
    const replay = eventsSource(p, bridge, missingBus);
    await replay.playAll();
    expect(replay.source.totals.failedRecords).toBe(0);
    const delivered = await drain();
    expect(delivered.map((e) => `${e.detail.scheduledTime} ${e.detail.status}`).sort()).toEqual(
      [`${a.scheduledTime} SUCCEEDED`, `${b.scheduledTime} FAILED`].sort(),
    );
  });
});
