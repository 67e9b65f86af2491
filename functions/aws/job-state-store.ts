/**
 * The job-state row on DynamoDB for the operator actions (job-control.ts): a consistent GetItem, and an UpdateItem
 * that is a compare-and-swap on `version` (or, for a row not written yet, on its absence). A refused write returns
 * the row as it is (ReturnValuesOnConditionCheckFailure: ALL_OLD), so the caller decides again without a read.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type JobState, jobStateKeyOf } from '../protocol/job-state';
import type { JobStateChange, JobStateStore, JobStateWrite } from '../protocol/ports';
import { asDependencyError, isConditionalFailure, refusedItem } from './classify-error';

/** The job-state rows of one occurrence table (JobStateStore). */
export class DynamoJobStateStore implements JobStateStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** The job's row by a consistent GetItem; undefined when the job has none yet. */
  async read(jobId: string): Promise<JobState | undefined> {
    try {
      const out = await this.documents.send(
        new GetCommand({ TableName: this.table, Key: jobStateKeyOf(jobId), ConsistentRead: true }),
      );
      return out.Item as JobState | undefined;
    } catch (error) {
      throw asDependencyError(`read the job-state row of ${jobId}`, error);
    }
  }

  /** Applies `change` by an UpdateItem conditioned on `version` being `expected` (undefined: on the row's absence). */
  async write(jobId: string, expected: number | undefined, change: JobStateChange): Promise<JobStateWrite> {
    try {
      const out = await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: jobStateKeyOf(jobId),
          ...updateExpression(expected, change),
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { written: true, state: out.Attributes as JobState };
    } catch (error) {
      if (!isConditionalFailure(error)) throw asDependencyError(`write the job-state row of ${jobId}`, error);
      return { written: false, current: refusedItem<JobState>(error) };
    }
  }
}

/** `SET a = :a, ..., version = :next REMOVE b, ...` on `version = :read`, or on no version for a new row. */
function updateExpression(expected: number | undefined, change: JobStateChange) {
  const setFields = Object.entries(change.set).filter(([, v]) => v !== undefined);
  const names: Record<string, string> = { '#version': 'version' };
  const values: Record<string, unknown> = { ':next': (expected ?? 0) + 1 };
  const sets = ['#version = :next'];
  setFields.forEach(([field, value], i) => {
    names[`#s${i}`] = field;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  const removes = change.remove.map((field, i) => {
    names[`#r${i}`] = field;
    return `#r${i}`;
  });
  if (expected !== undefined) values[':read'] = expected;
  return {
    UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: expected === undefined ? 'attribute_not_exists(#version)' : '#version = :read',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
