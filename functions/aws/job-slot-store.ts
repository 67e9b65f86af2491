/**
 * The worker's writes of the job-state row on DynamoDB (functions/protocol/job-state.ts): the running slot, the
 * buffer, the run of failures and the pause after failures. Every write increments `version`; the slow path's writes
 * are compare-and-swaps on it. A refused condition returns the row as it was (ReturnValuesOnConditionCheckFailure
 * ALL_OLD), so the caller decides again without another read; anything else is thrown as a DependencyError.
 *
 * `version` is incremented with `if_not_exists(version, 0) + 1` rather than ADD: the same effect, in the SET clause
 * the other attributes already use.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { type JobState, jobStateKeyOf } from '../protocol/job-state';
import { iso } from '../protocol/occurrence';
import type { JobSlotStore, SelfPause, SlotWrite, SlotWriteResult } from '../protocol/ports';
import { asDependencyError, isConditionalFailure, refusedItem } from './classify-error';

const NAMES = {
  '#version': 'version',
  '#slotTime': 'slotTime',
  '#slotLeaseId': 'slotLeaseId',
  '#buffer': 'buffer',
  '#pausedAt': 'pausedAt',
  '#pausedBy': 'pausedBy',
  '#pauseCause': 'pauseCause',
  '#pauseNote': 'pauseNote',
  '#consecutiveFailures': 'consecutiveFailures',
  '#countedLeaseId': 'countedLeaseId',
} as const;
type Name = keyof typeof NAMES;
const names = (...used: Name[]) => Object.fromEntries(used.map((n) => [n, NAMES[n]]));

const NEXT_VERSION = '#version = if_not_exists(#version, :zero) + :one';
const FAILURES = {
  failed: '#consecutiveFailures = if_not_exists(#consecutiveFailures, :zero) + :one',
  succeeded: '#consecutiveFailures = :zero',
} as const;

type Request = Omit<UpdateCommandInput, 'TableName' | 'Key'>;

export class DynamoJobSlotStore implements JobSlotStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  tryTake(jobId: string, slotTime: string, slotLeaseId: string): Promise<SlotWriteResult> {
    return this.conditional('take the running slot', jobId, {
      UpdateExpression: `SET #slotTime = :slotTime, #slotLeaseId = :slotLeaseId, ${NEXT_VERSION}`,
      ConditionExpression:
        '(attribute_not_exists(#slotTime) OR #slotTime = :slotTime) AND attribute_not_exists(#pausedAt) AND ' +
        'attribute_not_exists(#buffer)',
      ExpressionAttributeNames: names('#slotTime', '#slotLeaseId', '#version', '#pausedAt', '#buffer'),
      ExpressionAttributeValues: { ':slotTime': slotTime, ':slotLeaseId': slotLeaseId, ':zero': 0, ':one': 1 },
    });
  }

  writeIfVersion(jobId: string, version: number | undefined, write: SlotWrite): Promise<SlotWriteResult> {
    const sets = [NEXT_VERSION];
    const used: Name[] = ['#version'];
    const values: Record<string, unknown> = { ':zero': 0, ':one': 1 };
    if (write.slot !== undefined) {
      sets.push('#slotTime = :slotTime', '#slotLeaseId = :slotLeaseId');
      used.push('#slotTime', '#slotLeaseId');
      Object.assign(values, { ':slotTime': write.slot.slotTime, ':slotLeaseId': write.slot.slotLeaseId });
    }
    used.push('#buffer');
    if (write.buffer.length > 0) {
      sets.push('#buffer = :buffer');
      values[':buffer'] = write.buffer;
    }
    if (version !== undefined) values[':read'] = version;
    return this.conditional('write the job state', jobId, {
      UpdateExpression: `SET ${sets.join(', ')}${write.buffer.length > 0 ? '' : ' REMOVE #buffer'}`,
      ConditionExpression: version === undefined ? 'attribute_not_exists(#version)' : '#version = :read',
      ExpressionAttributeNames: names(...used),
      ExpressionAttributeValues: values,
    });
  }

  async release(jobId: string, slotLeaseId: string, failures: 'failed' | 'succeeded' | undefined) {
    const counted = failures === undefined ? '' : `, ${FAILURES[failures]}, #countedLeaseId = :slotLeaseId`;
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobStateKeyOf(jobId),
          UpdateExpression: `REMOVE #slotTime, #slotLeaseId SET ${NEXT_VERSION}${counted}`,
          ConditionExpression: '#slotLeaseId = :slotLeaseId',
          ExpressionAttributeNames: names(
            '#slotTime',
            '#slotLeaseId',
            '#version',
            ...(failures === undefined ? [] : ['#consecutiveFailures' as const, '#countedLeaseId' as const]),
          ),
          ExpressionAttributeValues: { ':slotLeaseId': slotLeaseId, ':zero': 0, ':one': 1 },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { released: true as const, state: out.Attributes as JobState };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('release the running slot', error);
      const state = refusedItem<JobState>(error);
      // Our own counting release, applied, whose response was lost: the SDK's retry found the slot gone.
      if (failures !== undefined && state?.countedLeaseId === slotLeaseId) return { released: true as const, state };
      return { released: false as const, state };
    }
  }

  async countFailures(jobId: string, outcome: 'failed' | 'succeeded', leaseId: string): Promise<JobState> {
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobStateKeyOf(jobId),
          UpdateExpression: `SET ${NEXT_VERSION}, ${FAILURES[outcome]}, #countedLeaseId = :leaseId`,
          ConditionExpression: 'attribute_not_exists(#countedLeaseId) OR #countedLeaseId <> :leaseId',
          ExpressionAttributeNames: names('#version', '#consecutiveFailures', '#countedLeaseId'),
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':leaseId': leaseId },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return out.Attributes as JobState;
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError('count the job failures', error);
      // Counted already: our own write, whose response was lost, refused the SDK's retry of it.
      const state = refusedItem<JobState>(error);
      if (state === undefined) throw asDependencyError('count the job failures', error);
      return state;
    }
  }

  pauseIfVersion(jobId: string, version: number, pause: SelfPause): Promise<SlotWriteResult> {
    return this.conditional('pause the job', jobId, {
      UpdateExpression: `SET ${NEXT_VERSION}, #pausedAt = :at, #pausedBy = :by, #pauseCause = :cause, #pauseNote = :note`,
      ConditionExpression: '#version = :read AND attribute_not_exists(#pausedAt)',
      ExpressionAttributeNames: names('#version', '#pausedAt', '#pausedBy', '#pauseCause', '#pauseNote'),
      ExpressionAttributeValues: {
        ':zero': 0,
        ':one': 1,
        ':read': version,
        ':at': iso(pause.pausedAt),
        ':by': pause.pausedBy,
        ':cause': pause.pauseCause,
        ':note': pause.pauseNote,
      },
    });
  }

  async read(jobId: string, consistent: boolean): Promise<JobState | undefined> {
    try {
      const out = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: jobStateKeyOf(jobId), ConsistentRead: consistent }),
      );
      return out.Item as JobState | undefined;
    } catch (error) {
      throw asDependencyError('read the job state', error);
    }
  }

  /** One conditional UpdateItem of the job-state row; refused: the row as it was. */
  private async conditional(operation: string, jobId: string, request: Request): Promise<SlotWriteResult> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: jobStateKeyOf(jobId),
          ...request,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { written: true };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError(operation, error);
      return { written: false, state: refusedItem<JobState>(error) };
    }
  }
}
