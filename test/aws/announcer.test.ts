import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { SnsAnnouncer } from '../../functions/aws/announcer';
import { DependencyError } from '../../functions/protocol/errors';
import type { ReportAnnouncement } from '../../functions/protocol/ports';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:report-ready.fifo';

const announcement = (overrides: Partial<ReportAnnouncement> = {}): ReportAnnouncement => ({
  jobId: 'daily-report',
  scheduledTime: '2026-11-30T06:00:00Z',
  reportKey: 'reports/daily-report/2026-11-30T06:00:00Z.md',
  reportUri: 's3://reports-bucket/reports/daily-report/2026-11-30T06:00:00Z.md',
  attempt: 1,
  succeededAt: '2026-11-30T06:00:42.000Z',
  ...overrides,
});

const snsMock = mockClient(SNSClient);
let announcer: SnsAnnouncer;

beforeEach(() => {
  snsMock.reset();
  announcer = new SnsAnnouncer(new SNSClient({ region: 'eu-west-1' }), TOPIC_ARN);
});

const publishedInput = (n: number) => snsMock.commandCalls(PublishCommand)[n]!.args[0].input;

describe('SnsAnnouncer.publish', () => {
  it('publishes to the topic, grouped by job, deduplicated by the occurrence key', async () => {
    snsMock.on(PublishCommand).resolves({ MessageId: 'msg-1' });
    await announcer.publish(announcement());
    expect(snsMock).toHaveReceivedCommandTimes(PublishCommand, 1);
    expect(snsMock).toHaveReceivedCommandWith(PublishCommand, {
      TopicArn: TOPIC_ARN,
      MessageGroupId: 'daily-report',
      MessageDeduplicationId: 'daily-report#2026-11-30T06:00:00Z',
    });
  });

  it('the message is JSON carrying the report key and URI', async () => {
    snsMock.on(PublishCommand).resolves({ MessageId: 'msg-1' });
    const a = announcement();
    await announcer.publish(a);
    const message = JSON.parse(publishedInput(0).Message!) as Record<string, unknown>;
    expect(message).toMatchObject({
      jobId: a.jobId,
      scheduledTime: a.scheduledTime,
      reportKey: a.reportKey,
      reportUri: a.reportUri,
      attempt: a.attempt,
      succeededAt: a.succeededAt,
    });
  });

  it('two publishes of the same occurrence carry the same deduplication id (the FIFO topic drops the second)', async () => {
    snsMock.on(PublishCommand).resolves({ MessageId: 'msg-1' });
    await announcer.publish(announcement({ attempt: 1, succeededAt: '2026-11-30T06:00:42.000Z' }));
    // A retried stream record may see a later attempt or timestamp; the key is what makes it "the same".
    await announcer.publish(announcement({ attempt: 2, succeededAt: '2026-11-30T06:01:42.000Z' }));
    expect(publishedInput(0).MessageDeduplicationId).toBe(publishedInput(1).MessageDeduplicationId);
  });

  it('different occurrences carry different deduplication ids', async () => {
    snsMock.on(PublishCommand).resolves({ MessageId: 'msg-1' });
    await announcer.publish(announcement());
    await announcer.publish(announcement({ scheduledTime: '2026-12-01T06:00:00Z' }));
    await announcer.publish(announcement({ jobId: 'weekly-report' }));
    const ids = [0, 1, 2].map((n) => publishedInput(n).MessageDeduplicationId);
    expect(new Set(ids).size).toBe(3);
    expect(publishedInput(2).MessageGroupId).toBe('weekly-report');
  });

  it('ids for the longest allowed job id (64 characters) stay within the SNS FIFO limits: 128 characters, allowed set', async () => {
    snsMock.on(PublishCommand).resolves({ MessageId: 'msg-1' });
    const jobId = `a${'-_x9'.repeat(15)}bcd`;
    expect(jobId).toHaveLength(64);
    await announcer.publish(announcement({ jobId }));
    const allowed = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;
    expect(publishedInput(0).MessageDeduplicationId).toMatch(allowed);
    expect(publishedInput(0).MessageGroupId).toMatch(allowed);
  });

  it('returns the MessageId SNS assigned', async () => {
    snsMock.on(PublishCommand).resolves({ MessageId: 'b3c1f2e0-msg', SequenceNumber: '1' });
    await expect(announcer.publish(announcement())).resolves.toBe('b3c1f2e0-msg');
  });

  it('throws a classified DependencyError when publishing fails', async () => {
    snsMock
      .on(PublishCommand)
      .rejects(
        Object.assign(new Error('throttled'), { name: 'ThrottledException', $metadata: { httpStatusCode: 400 } }),
      );
    const error = await announcer.publish(announcement()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect(error).toMatchObject({ kind: 'transient', operation: 'announce report' });
  });

  it('an authorization error is fatal', async () => {
    snsMock
      .on(PublishCommand)
      .rejects(
        Object.assign(new Error('no'), { name: 'AuthorizationErrorException', $metadata: { httpStatusCode: 403 } }),
      );
    await expect(announcer.publish(announcement())).rejects.toMatchObject({ name: 'DependencyError', kind: 'fatal' });
  });
});
