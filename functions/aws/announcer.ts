/**
 * "Report ready" on an SNS FIFO topic; the occurrence key is the deduplication id.
 */
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { deduplicationIdOf, messageGroupIdOf } from '../protocol/announce-report';
import type { Announcer, ReportAnnouncement } from '../protocol/ports';
import { asDependencyError } from './classify-error';

export class SnsAnnouncer implements Announcer {
  constructor(
    private readonly client: SNSClient,
    private readonly topicArn: string,
  ) {}

  async publish(announcement: ReportAnnouncement): Promise<string> {
    try {
      const out = await this.client.send(
        new PublishCommand({
          TopicArn: this.topicArn,
          Message: JSON.stringify({ type: 'report-ready', ...announcement }),
          // One group per job (per schedule, for a job with schedules created at run time) keeps each one's
          // announcements in order without serialising all of them.
          MessageGroupId: messageGroupIdOf(announcement),
          MessageDeduplicationId: deduplicationIdOf(announcement),
          MessageAttributes: {
            jobId: { DataType: 'String', StringValue: announcement.jobId },
            ...(announcement.scheduleKey === undefined
              ? {}
              : { scheduleKey: { DataType: 'String', StringValue: announcement.scheduleKey } }),
          },
        }),
      );
      return out.MessageId ?? '';
    } catch (error) {
      throw asDependencyError('announce report', error);
    }
  }
}
