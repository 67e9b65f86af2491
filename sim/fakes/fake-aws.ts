/**
 * Stateful fakes of DynamoDB, S3, SQS and SNS plugged in below the real adapters with aws-sdk-client-mock, so
 * handler tests run the real condition expressions and conditional writes against state they can inspect.
 * Faults are injected per call with `failNext`. They live beside the simulation (sim/world.ts), which runs every
 * simulated occurrence on them; the handler tests in test/ use them too.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  HeadObjectCommand,
  type HeadObjectCommandInput,
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { PublishCommand, type PublishCommandInput, SNSClient } from '@aws-sdk/client-sns';
import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import {
  applyUpdate,
  type ExpressionInput,
  evaluateCondition,
  type Row as Item,
  placeholderProblems,
} from './dynamo-expressions';
import { FakeTable, type TableSchema } from './fake-table';
import { IndexedTable } from './status-index';

type Fault = () => Error;
/**
 * A request as a test's hook sees it: whichever operation it was, read by the field the test knows it has.
 */
// biome-ignore lint/suspicious/noExplicitAny: a hook gets every operation's input and tests read it without narrowing.
type AnyInput = Record<string, any>;
/** A message as the topic received it: the announcer always sets its body and deduplication id. */
export type PublishedMessage = PublishCommandInput & {
  readonly Message: string;
  readonly MessageDeduplicationId: string;
};

/** Errors as the SDK would raise them. */
export const faults = {
  throttled: (): Error =>
    Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }),
  unavailable: (): Error =>
    Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }),
  accessDenied: (): Error =>
    Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
  s3Conflict: (): Error =>
    new S3ServiceException({
      name: 'ConditionalRequestConflict',
      $fault: 'client',
      $metadata: { httpStatusCode: 409 },
      message: 'conflict',
    }),
};

export class FakeAws {
  readonly table = new Map<string, Item>();
  /** The status index as DynamoDB keeps it: projected entries, and the index writes each table write cost. */
  readonly statusIndex = new IndexedTable(this.table);
  readonly objects = new Map<string, { body: string; contentType?: string; metadata?: Record<string, string> }>();
  readonly sent: string[] = [];
  readonly hidden: { receiptHandle: string; seconds: number }[] = [];
  /** Everything published, and what a FIFO topic delivered after deduplication. */
  readonly published: PublishedMessage[] = [];
  readonly delivered: PublishedMessage[] = [];
  readonly calls: string[] = [];
  private readonly dedup = new Map<string, number>();
  private readonly queuedFaults = new Map<string, Fault[]>();
  /** Runs after a successful write and before its response: throw here to model "succeeded, response lost". */
  afterWrite?: (operation: string, input: AnyInput) => void;
  /** The next call of this operation applies its change and never answers: the caller's process died there. */
  dieAfter?: string;
  /**
   * The next call of this operation applies its change, its response is lost, and the SDK's retry of the same
   * request is what the caller sees (for a conditional write: the condition now fails against its own change).
   */
  loseResponseOf?: string;
  /**
   * Optional model of the job queue's delivery (visibility, delay, redelivery, DLQ), used by the simulation in
   * sim/. Without one, sends and visibility changes are only recorded, as before.
   */
  queueModel?: {
    send(body: string): void;
    changeVisibility(receiptHandle: string, seconds: number): void;
  };
  /** Called after every applied table write with the row before and after: the simulation's table stream. */
  onRowChange?: (before: Item | undefined, after: Item) => void;
  /**
   * More tables, by name (addTable): a request whose TableName is one of them goes there; any other request is the
   * occurrence table's, as before.
   */
  readonly tables = new Map<string, FakeTable>();

  readonly ddb = mockClient(DynamoDBDocumentClient);
  readonly s3 = mockClient(S3Client);
  readonly sqs = mockClient(SQSClient);
  readonly sns = mockClient(SNSClient);

  constructor(private readonly now: () => number = Date.now) {
    this.ddb
      .on(PutCommand)
      .callsFake((input) => this.run('PutItem', input, () => this.other(input)?.put(input) ?? this.put(input)));
    this.ddb
      .on(UpdateCommand)
      .callsFake((input) =>
        this.run('UpdateItem', input, () => this.other(input)?.update(input) ?? this.update(input)),
      );
    this.ddb
      .on(GetCommand)
      .callsFake((input) =>
        this.run('GetItem', input, () => this.other(input)?.get(input) ?? { Item: this.table.get(rowKey(input.Key)) }),
      );
    this.ddb
      .on(QueryCommand)
      .callsFake((input) => this.run('Query', input, () => this.other(input)?.query(input) ?? this.query(input)));
    this.ddb.on(DeleteCommand).callsFake((input) =>
      this.run('DeleteItem', input, () => {
        const table = this.other(input);
        if (table !== undefined) return table.delete(input);
        // The waiting list of a capped job (functions/aws/capacity-store.ts) is the only thing deleted there.
        if (!String(input.Key?.scheduledTime).startsWith('#wait'))
          throw new Error(
            'the fake occurrence table takes no DeleteItem of a row: only waiting-list items are deleted',
          );
        this.table.delete(rowKey(input.Key));
        return {};
      }),
    );
    this.ddb.on(BatchGetCommand).callsFake((input) => this.run('BatchGetItem', input, () => this.batchGet(input)));
    this.s3.on(PutObjectCommand).callsFake((input) => this.run('PutObject', input, () => this.putObject(input)));
    this.s3.on(HeadObjectCommand).callsFake((input) => this.run('HeadObject', input, () => this.headObject(input)));
    this.sqs.on(SendMessageCommand).callsFake((input) =>
      this.run('SendMessage', input, () => {
        const body = required(input.MessageBody, 'MessageBody');
        this.sent.push(body);
        this.queueModel?.send(body);
        return { MessageId: `m-${this.sent.length}` };
      }),
    );
    this.sqs.on(ChangeMessageVisibilityCommand).callsFake((input) =>
      this.run('ChangeMessageVisibility', input, () => {
        // A model may refuse (e.g. a receipt handle that is no longer current); then nothing is recorded.
        const receiptHandle = required(input.ReceiptHandle, 'ReceiptHandle');
        const seconds = required(input.VisibilityTimeout, 'VisibilityTimeout');
        this.queueModel?.changeVisibility(receiptHandle, seconds);
        this.hidden.push({ receiptHandle, seconds });
        return {};
      }),
    );
    this.sns.on(PublishCommand).callsFake((input) => this.run('Publish', input, () => this.publish(input)));
  }

  /** Add a table by its key schema (fake-table.ts); requests naming it go there until reset. */
  addTable(name: string, schema: TableSchema): FakeTable {
    const table = new FakeTable(name, schema);
    this.tables.set(name, table);
    return table;
  }

  /** The next `count` calls of `operation` (e.g. 'UpdateItem') fail with `fault` before touching state. */
  failNext(operation: string, fault: Fault, count = 1): void {
    const list = this.queuedFaults.get(operation) ?? [];
    for (let i = 0; i < count; i++) list.push(fault);
    this.queuedFaults.set(operation, list);
  }

  /** Every call of `operation` fails until `clearFaults`. */
  failAlways(operation: string, fault: Fault): void {
    this.failNext(operation, fault, 1_000_000);
  }

  clearFaults(operation?: string): void {
    if (operation) this.queuedFaults.delete(operation);
    else this.queuedFaults.clear();
  }

  row(jobId: string, scheduledTime: string): Item | undefined {
    return this.table.get(rowKey({ jobId, scheduledTime }));
  }

  count(operation: string): number {
    return this.calls.filter((c) => c === operation).length;
  }

  restore(): void {
    for (const m of [this.ddb, this.s3, this.sqs, this.sns]) m.restore();
  }

  /**
   * Forget all state, recorded calls, faults and hooks, keeping the mocks installed: the simulation reuses one
   * FakeAws for thousands of runs, because every new one leaves sinon fakes behind even after restore().
   */
  reset(): void {
    // The mocks remember every call they answered; thousands of runs would keep them all.
    for (const m of [this.ddb, this.s3, this.sqs, this.sns]) m.resetHistory();
    for (const m of [this.table, this.objects, this.dedup, this.queuedFaults, this.tables]) m.clear();
    this.statusIndex.reset();
    for (const list of [this.sent, this.hidden, this.published, this.delivered, this.calls]) list.length = 0;
    this.afterWrite = undefined;
    this.dieAfter = undefined;
    this.loseResponseOf = undefined;
    this.queueModel = undefined;
    this.onRowChange = undefined;
  }

  private run(operation: string, input: AnyInput, apply: () => unknown): unknown {
    this.calls.push(operation);
    const fault = this.queuedFaults.get(operation)?.shift();
    if (fault) throw fault();
    const result = apply();
    if (this.loseResponseOf === operation) {
      this.loseResponseOf = undefined;
      this.calls.push(operation);
      return apply();
    }
    this.afterWrite?.(operation, input);
    if (this.dieAfter === operation) {
      this.dieAfter = undefined;
      return new Promise(() => {});
    }
    return result;
  }

  /** The added table the request names, if any. */
  private other(input: { readonly TableName?: string }): FakeTable | undefined {
    return input.TableName === undefined ? undefined : this.tables.get(input.TableName);
  }

  private put(input: PutCommandInput): unknown {
    checkPlaceholders(input, [input.ConditionExpression]);
    const item = required(input.Item, 'Item');
    const key = rowKey(item);
    const existing = this.table.get(key);
    if (input.ConditionExpression && !evaluateCondition(input.ConditionExpression, input, existing)) {
      throw conditionalFailure(input, existing);
    }
    const stored = structuredClone(item);
    this.table.set(key, stored);
    this.statusIndex.written(existing, stored);
    this.onRowChange?.(existing, stored);
    return {};
  }

  private update(input: UpdateCommandInput): unknown {
    checkPlaceholders(input, [input.ConditionExpression, input.UpdateExpression]);
    const key = rowKey(input.Key);
    const existing = this.table.get(key);
    const current = existing ?? { ...input.Key };
    if (input.ConditionExpression && !evaluateCondition(input.ConditionExpression, input, existing)) {
      throw conditionalFailure(input, existing);
    }
    const updated = applyUpdate(required(input.UpdateExpression, 'UpdateExpression'), input, current);
    this.table.set(key, updated);
    this.statusIndex.written(existing, updated);
    this.onRowChange?.(existing, updated);
    if (input.ReturnValues === 'ALL_NEW') return { Attributes: structuredClone(updated) };
    return input.ReturnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: structuredClone(existing) } : {};
  }

  /**
   * A Query on the table or the status index, as DynamoDB answers it: in sort-key order (reversed with
   * ScanIndexForward false), `Limit` items read before the filter, and a LastEvaluatedKey when it stopped early.
   */
  private query(input: QueryCommandInput): unknown {
    checkPlaceholders(input, [input.KeyConditionExpression, input.FilterExpression]);
    const keyCondition = required(input.KeyConditionExpression, 'KeyConditionExpression');
    const source = input.IndexName === undefined ? [...this.table.values()] : this.statusIndex.entries(input.IndexName);
    const matching = source
      .filter((item) => evaluateCondition(keyCondition, input, item))
      .sort((a, b) => inKeyOrder(a, b) * (input.ScanIndexForward === false ? -1 : 1));
    const start =
      input.ExclusiveStartKey === undefined ? 0 : matching.findIndex((i) => sameRow(i, input.ExclusiveStartKey)) + 1;
    const read = matching.slice(start, input.Limit === undefined ? undefined : start + input.Limit);
    const more = start + read.length < matching.length;
    const items = read.filter(
      (item) => !input.FilterExpression || evaluateCondition(input.FilterExpression, input, item),
    );
    const last = read.at(-1);
    return {
      Items: items.map((i) => structuredClone(i)),
      ...(more && last !== undefined ? { LastEvaluatedKey: this.statusIndex.keyOf(last, input.IndexName) } : {}),
    };
  }

  /** BatchGetItem of the occurrence table: every key found is answered (the fake never leaves keys unprocessed). */
  private batchGet(input: BatchGetCommandInput): unknown {
    const requests = required(input.RequestItems, 'RequestItems');
    const responses: Record<string, Item[]> = {};
    for (const [tableName, request] of Object.entries(requests)) {
      const keys = required(request.Keys, 'Keys');
      if (keys.length > 100) {
        throw Object.assign(new Error('Too many items requested for the BatchGetItem call'), {
          name: 'ValidationException',
          $metadata: { httpStatusCode: 400 },
        });
      }
      responses[tableName] = keys.flatMap((key) => {
        const row = this.table.get(rowKey(key));
        return row === undefined ? [] : [structuredClone(row)];
      });
    }
    return { Responses: responses, UnprocessedKeys: {} };
  }

  private putObject(input: PutObjectCommandInput): unknown {
    const key = required(input.Key, 'Key');
    if (input.IfNoneMatch === '*' && this.objects.has(key)) {
      throw new S3ServiceException({
        name: 'PreconditionFailed',
        $fault: 'client',
        $metadata: { httpStatusCode: 412 },
        message: 'At least one of the pre-conditions you specified did not hold',
      });
    }
    this.objects.set(key, { body: String(input.Body), contentType: input.ContentType, metadata: input.Metadata });
    return { ETag: `"etag-${this.objects.size}"` };
  }

  private headObject(input: HeadObjectCommandInput): unknown {
    const object = this.objects.get(required(input.Key, 'Key'));
    if (object === undefined) {
      throw new S3ServiceException({
        name: 'NotFound',
        $fault: 'client',
        $metadata: { httpStatusCode: 404 },
        message: 'Not Found',
      });
    }
    return { ContentLength: object.body.length };
  }

  /** An SNS FIFO topic drops a message whose deduplication id it saw in the last five minutes. */
  private publish(input: PublishCommandInput): unknown {
    const message = input as PublishedMessage;
    this.published.push(message);
    const id = message.MessageDeduplicationId;
    const seen = this.dedup.get(id);
    if (seen === undefined || this.now() - seen >= 5 * 60_000) {
      this.dedup.set(id, this.now());
      this.delivered.push(message);
    }
    return { MessageId: `sns-${this.published.length}` };
  }
}

/** Sort-key order (scheduledTime), ties broken by the table key so that pages are stable. */
function inKeyOrder(a: Item, b: Item): number {
  return (
    String(a.scheduledTime).localeCompare(String(b.scheduledTime)) || String(a.jobId).localeCompare(String(b.jobId))
  );
}

function sameRow(a: Item, key: Record<string, unknown> | undefined): boolean {
  return key !== undefined && a.jobId === key.jobId && a.scheduledTime === key.scheduledTime;
}

function rowKey(key: Record<string, unknown> | undefined): string {
  const { jobId, scheduledTime } = required(key, 'Key');
  return `${jobId}|${scheduledTime}`;
}

/** The SDK rejects a request without a required parameter; so does the fake. */
function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) {
    throw Object.assign(new Error(`Missing required parameter ${name}`), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
  }
  return value;
}

/** DynamoDB rejects a request with an unused or undefined placeholder; so does the fake. */
function checkPlaceholders(input: ExpressionInput, expressions: (string | undefined)[]): void {
  const problems = placeholderProblems(expressions, input);
  if (problems.length > 0) {
    throw Object.assign(new Error(`Invalid expression: ${problems.join('; ')}`), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
  }
}

function conditionalFailure(
  input: { readonly ReturnValuesOnConditionCheckFailure?: string },
  existing: Item | undefined,
): Error {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    // DynamoDB returns the old item, marshalled, when asked to.
    Item: input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing ? marshall(existing) : undefined,
  });
}
