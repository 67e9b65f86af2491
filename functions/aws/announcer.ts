/**
 * "Report ready" on an SNS FIFO topic; the occurrence key is the deduplication id.
 */
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import { deduplicationIdOf } from '../protocol/announce-report';
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
          // One group per job keeps each job's announcements in order without serialising all jobs.
          MessageGroupId: announcement.jobId,
          MessageDeduplicationId: deduplicationIdOf(announcement),
          MessageAttributes: { jobId: { DataType: 'String', StringValue: announcement.jobId } },
        }),
      );
      return out.MessageId ?? '';
    } catch (error) {
      throw asDependencyError('announce report', error);
    }
  }
}
