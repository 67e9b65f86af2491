/**
 * One trace per occurrence (functions/runtime/trace-context.ts): the trigger's trace header rides on its message as
 * AWSTraceHeader, and each worker attempt writes the trigger's trace id, with the occurrence key, on every log line.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { SqsWorkQueue } from '../../functions/aws/work-queue';
import { encodeEnvelope } from '../../functions/protocol/envelope';
import { currentTraceHeader, traceIdOf } from '../../functions/runtime/trace-context';
import { recordFields } from '../../functions/worker';
import { lambdaContext, makeHarness, SCHEDULED, sqsEvent, timedJob, useHarnessTime } from '../support/harness';

const TRACE_ID = '1-5759e988-bd862e3fe1be46a994272793';
const HEADER = `Root=${TRACE_ID};Parent=53995c3f42cd8ad8;Sampled=1`;
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/occurrences';
const KEY = { jobId: 'report', scheduledTime: SCHEDULED };

describe('the trace header', () => {
  it("reads the invocation's header from _X_AMZN_TRACE_ID, and none that is missing or malformed", () => {
    expect(currentTraceHeader({ _X_AMZN_TRACE_ID: HEADER })).toBe(HEADER);
    expect(currentTraceHeader({})).toBeUndefined();
    expect(currentTraceHeader({ _X_AMZN_TRACE_ID: 'not a header' })).toBeUndefined();
    expect(traceIdOf(HEADER)).toBe(TRACE_ID);
    expect(traceIdOf('Parent=53995c3f42cd8ad8')).toBeUndefined();
  });
});

describe('SqsWorkQueue.send carries the sender trace', () => {
  const sqsMock = mockClient(SQSClient);
  afterEach(() => sqsMock.reset());
  afterAll(() => sqsMock.restore());

  it('as the AWSTraceHeader system attribute, when the sender has one', async () => {
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    await new SqsWorkQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL, () => HEADER).send('{}');
    expect(sqsMock.commandCalls(SendMessageCommand)[0].args[0].input.MessageSystemAttributes).toEqual({
      AWSTraceHeader: { DataType: 'String', StringValue: HEADER },
    });
  });

  it('with no attribute outside a traced invocation', async () => {
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    await new SqsWorkQueue(new SQSClient({ region: 'eu-west-1' }), QUEUE_URL, () => undefined).send('{}');
    expect(sqsMock.commandCalls(SendMessageCommand)[0].args[0].input).not.toHaveProperty('MessageSystemAttributes');
  });
});

describe("the AWS SDK's recursion-detection middleware (what docs/tracing.md says of the other calls)", () => {
  afterEach(() => vi.unstubAllEnvs());

  /** The headers of the request the client would send, stopped before it leaves. */
  async function sentHeaders(): Promise<Record<string, string>> {
    // Any client of the SDK: each has the middleware (STS here, which no other test of this file stubs).
    const client = new STSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    let headers: Record<string, string> = {};
    client.middlewareStack.add(
      () => async (args) => {
        headers = (args.request as { headers: Record<string, string> }).headers;
        throw new Error('stop before sending');
      },
      { step: 'finalizeRequest', name: 'captureHeaders' },
    );
    await client.send(new GetCallerIdentityCommand({})).catch(() => undefined);
    return headers;
  }

  it('sends X-Amzn-Trace-Id from _X_AMZN_TRACE_ID inside Lambda, so every SDK call of a traced invocation joins it', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'worker');
    vi.stubEnv('_X_AMZN_TRACE_ID', HEADER);
    expect((await sentHeaders())['X-Amzn-Trace-Id']).toBe(HEADER);
  });

  it('sends none outside Lambda', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', '');
    vi.stubEnv('_X_AMZN_TRACE_ID', HEADER);
    expect(await sentHeaders()).not.toHaveProperty('X-Amzn-Trace-Id');
  });
});

describe('a worker attempt is linked to the trigger trace', () => {
  useHarnessTime();

  it('names the occurrence and the trigger trace id on its record lines', () => {
    const jobs = new Map([['report', {}]]);
    const record = { body: encodeEnvelope(KEY), attributes: { AWSTraceHeader: HEADER } } as never;
    expect(recordFields(record, jobs)).toEqual({ ...KEY, triggerTraceId: TRACE_ID });
    expect(recordFields({ body: 'not json', attributes: {} } as never, jobs)).toEqual({});
  });

  it("writes the trigger's trace id and the occurrence key on every line of the attempt", async () => {
    const h = makeHarness({ jobs: { report: timedJob(1_000) } });
    await h.trigger(KEY);
    const event = sqsEvent([{ messageId: 'msg-1', body: h.aws.sent.at(-1)! }]);
    Object.assign(event.Records[0].attributes, { AWSTraceHeader: HEADER });
    h.logs.length = 0;
    const run = h.worker(event, lambdaContext(150_000));
    await vi.advanceTimersByTimeAsync(2_000);
    await run;

    // Every line but the batch's own summary, which is of no one occurrence.
    const attemptLines = h.logs.filter((l) => l.message !== 'batch done');
    expect(attemptLines.length).toBeGreaterThan(0);
    for (const line of attemptLines) expect(line.fields).toMatchObject({ ...KEY, triggerTraceId: TRACE_ID });
  });
});
