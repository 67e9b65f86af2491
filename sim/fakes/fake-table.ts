/**
 * A DynamoDB table for the fakes, by its key schema: any partition and sort key, and any number of global secondary
 * indexes with projection ALL, sparse as DynamoDB's are (a row without both of an index's key attributes is not in
 * it). FakeAws (fake-aws.ts) routes a request to one of these by its TableName; the occurrence table keeps its own
 * model there (its status index and the index write accounting). The schedule registry's table (two sparse GSIs,
 * deletes, paged queries by key prefix) is the first user.
 *
 * Semantics as DynamoDB's, where an adapter could tell: a conditional write that fails changes nothing; a query
 * reads `Limit` items in key order before its filter, and says where it stopped; an index is eventually consistent
 * (here: current), and a ConsistentRead on it is refused.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type {
  DeleteCommandInput,
  GetCommandInput,
  PutCommandInput,
  QueryCommandInput,
  UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import {
  applyUpdate,
  type ExpressionInput,
  evaluateCondition,
  placeholderProblems,
  type Row,
} from './dynamo-expressions';

/** A global secondary index, projection ALL. */
export interface IndexSchema {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
}

export interface TableSchema {
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly indexes?: readonly IndexSchema[];
}

/** One applied write: the row before and after (undefined after: deleted). */
export type TableWriteListener = (before: Row | undefined, after: Row | undefined) => void;

export class FakeTable {
  readonly rows = new Map<string, Row>();
  /** Called after every applied write (put, update, delete). */
  onWrite?: TableWriteListener;

  constructor(
    readonly name: string,
    readonly schema: TableSchema,
  ) {}

  /** The row under this key, if any (a copy is not taken: tests read it). */
  row(key: Row): Row | undefined {
    return this.rows.get(this.keyString(key));
  }

  get(input: GetCommandInput): unknown {
    const item = this.rows.get(this.keyString(required(input.Key, 'Key')));
    return { Item: item === undefined ? undefined : structuredClone(item) };
  }

  put(input: PutCommandInput): unknown {
    checkPlaceholders(input, [input.ConditionExpression]);
    const item = required(input.Item, 'Item') as Row;
    const key = this.keyString(item);
    const existing = this.rows.get(key);
    this.check(input, existing);
    const stored = structuredClone(item);
    this.rows.set(key, stored);
    this.onWrite?.(existing, stored);
    return input.ReturnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: structuredClone(existing) } : {};
  }

  update(input: UpdateCommandInput): unknown {
    checkPlaceholders(input, [input.ConditionExpression, input.UpdateExpression]);
    const keyAttributes = required(input.Key, 'Key') as Row;
    const key = this.keyString(keyAttributes);
    const existing = this.rows.get(key);
    this.check(input, existing);
    const updated = applyUpdate(required(input.UpdateExpression, 'UpdateExpression'), input, existing ?? keyAttributes);
    for (const k of this.keyNames()) {
      if (updated[k] !== keyAttributes[k])
        throw validation(`Cannot update attribute ${k}. This attribute is part of the key`);
    }
    this.rows.set(key, updated);
    this.onWrite?.(existing, updated);
    if (input.ReturnValues === 'ALL_NEW') return { Attributes: structuredClone(updated) };
    return input.ReturnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: structuredClone(existing) } : {};
  }

  delete(input: DeleteCommandInput): unknown {
    checkPlaceholders(input, [input.ConditionExpression]);
    const key = this.keyString(required(input.Key, 'Key') as Row);
    const existing = this.rows.get(key);
    this.check(input, existing);
    if (existing !== undefined) {
      this.rows.delete(key);
      this.onWrite?.(existing, undefined);
    }
    return input.ReturnValues === 'ALL_OLD' && existing !== undefined ? { Attributes: structuredClone(existing) } : {};
  }

  /**
   * A Query of the table or one of its indexes: the items whose key condition holds, in sort-key order (ties, on an
   * index, in table-key order), `Limit` of them read from ExclusiveStartKey on, then filtered.
   */
  query(input: QueryCommandInput): unknown {
    checkPlaceholders(input, [input.KeyConditionExpression, input.FilterExpression, input.ProjectionExpression]);
    const keyCondition = required(input.KeyConditionExpression, 'KeyConditionExpression');
    const index = input.IndexName === undefined ? undefined : this.index(input.IndexName);
    if (index !== undefined && input.ConsistentRead === true)
      throw validation('Consistent reads are not supported on global secondary indexes');
    const schema = index ?? this.schema;
    const source = [...this.rows.values()].filter((row) => index === undefined || inIndex(row, index));
    const direction = input.ScanIndexForward === false ? -1 : 1;
    const matching = source
      .filter((row) => evaluateCondition(keyCondition, input, row))
      .sort((a, b) => (compareBy(a, b, schema.sortKey) || this.compareKeys(a, b)) * direction);
    const startKey = input.ExclusiveStartKey as Row | undefined;
    const start =
      startKey === undefined ? 0 : matching.findIndex((row) => this.keyString(row) === this.keyString(startKey)) + 1;
    const read = matching.slice(start, input.Limit === undefined ? undefined : start + input.Limit);
    const more = start + read.length < matching.length;
    const items = read.filter(
      (row) => !input.FilterExpression || evaluateCondition(input.FilterExpression, input, row),
    );
    const last = read.at(-1);
    const names = [...this.keyNames(), ...(index ? [index.partitionKey, index.sortKey] : [])].filter(
      (n): n is string => n !== undefined,
    );
    return {
      Items: items.map((row) => project(row, input)),
      Count: items.length,
      ScannedCount: read.length,
      ...(more && last !== undefined ? { LastEvaluatedKey: Object.fromEntries(names.map((n) => [n, last[n]])) } : {}),
    };
  }

  private check(
    input: ExpressionInput & { ConditionExpression?: string; ReturnValuesOnConditionCheckFailure?: string },
    existing: Row | undefined,
  ): void {
    if (input.ConditionExpression && !evaluateCondition(input.ConditionExpression, input, existing)) {
      throw new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: { httpStatusCode: 400 },
        Item:
          input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing
            ? (marshall(existing) as never)
            : undefined,
      });
    }
  }

  private index(name: string): IndexSchema {
    const index = this.schema.indexes?.find((i) => i.name === name);
    if (index === undefined) throw validation(`The table does not have the specified index: ${name}`);
    return index;
  }

  private keyNames(): string[] {
    return [this.schema.partitionKey, ...(this.schema.sortKey === undefined ? [] : [this.schema.sortKey])];
  }

  private keyString(key: Row): string {
    return JSON.stringify(
      this.keyNames().map((n) => {
        const value = key[n];
        if (typeof value !== 'string' && typeof value !== 'number')
          throw validation(`The provided key element does not match the schema: ${n} is ${String(value)}`);
        return value;
      }),
    );
  }

  private compareKeys(a: Row, b: Row): number {
    return this.keyNames().reduce((order, n) => order || compareBy(a, b, n), 0);
  }
}

/** Whether a row has the index's key attributes, both strings or numbers: a sparse index holds only those. */
function inIndex(row: Row, index: IndexSchema): boolean {
  const isKey = (v: unknown) => typeof v === 'string' || typeof v === 'number';
  return isKey(row[index.partitionKey]) && (index.sortKey === undefined || isKey(row[index.sortKey]));
}

function compareBy(a: Row, b: Row, attribute: string | undefined): number {
  if (attribute === undefined) return 0;
  const x = a[attribute];
  const y = b[attribute];
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  // DynamoDB orders strings by their UTF-8 bytes; for the ASCII keys the adapters write, that is code-unit order.
  const s = String(x);
  const t = String(y);
  return s < t ? -1 : s > t ? 1 : 0;
}

/** The item, or only the attributes a ProjectionExpression names (top-level names only). */
function project(row: Row, input: QueryCommandInput): Row {
  if (input.ProjectionExpression === undefined) return structuredClone(row);
  const names = input.ProjectionExpression.split(',').map((p) => {
    const t = p.trim();
    return t.startsWith('#') ? (input.ExpressionAttributeNames?.[t] ?? t) : t;
  });
  return Object.fromEntries(names.filter((n) => row[n] !== undefined).map((n) => [n, structuredClone(row[n])]));
}

function validation(message: string): Error {
  return Object.assign(new Error(message), { name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
}

function required<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw validation(`Missing required parameter ${name}`);
  return value;
}

function checkPlaceholders(input: ExpressionInput, expressions: (string | undefined)[]): void {
  const problems = placeholderProblems(expressions, input);
  if (problems.length > 0) throw validation(`Invalid expression: ${problems.join('; ')}`);
}
