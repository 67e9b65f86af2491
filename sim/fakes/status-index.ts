/**
 * The status index as DynamoDB keeps it, for the fakes: an entry per row that has the index's partition key, holding
 * the keys and the projected attributes only, and a count of the index writes each table write costs, the way
 * DynamoDB bills them (a new or removed entry is one write, a changed index key is a delete and a put, a changed
 * projected attribute is one write, anything else none). Tests assert with it that a heartbeat writes the table
 * only, and that the happy path costs 4 index writes (test/aws/status-index-writes.test.ts): the insert's put, the
 * claim's and the completion's in-place rewrites under OPEN#k, and the announcement's removal of the key.
 */
import { OCCURRENCE_TABLE } from '../../functions/protocol/table-schema';
import type { Row } from './dynamo-expressions';

const INDEX = OCCURRENCE_TABLE.statusIndex;
const ENTRY_ATTRIBUTES: readonly string[] = [
  OCCURRENCE_TABLE.partitionKey,
  OCCURRENCE_TABLE.sortKey,
  INDEX.partitionKey,
  ...INDEX.nonKeyAttributes,
];

/** One table write's effect on the index. */
export interface IndexWrite {
  readonly jobId: unknown;
  readonly scheduledTime: unknown;
  /** Index write operations it cost: 0, 1 or 2. */
  readonly writes: number;
  /** The index partition keys written (both, for a moved entry). */
  readonly partitions: readonly string[];
}

export class IndexedTable {
  /** Every table write that cost index writes, in order. */
  readonly log: IndexWrite[] = [];

  /** The index is read from the table's rows as they are, so a test that seeds a row directly sees it indexed. */
  constructor(private readonly table: ReadonlyMap<string, Row>) {}

  /** Index writes so far. */
  get writes(): number {
    return this.log.reduce((sum, w) => sum + w.writes, 0);
  }

  /** Count what one table write cost the index; `after` is the row as stored. */
  written(before: Row | undefined, after: Row): void {
    const old = before === undefined ? undefined : entryOf(before);
    const next = entryOf(after);
    const cost = writeCost(old, next);
    if (cost === 0) return;
    const partitions = [old, next].flatMap((e) => (e === undefined ? [] : [String(e[INDEX.partitionKey])]));
    this.log.push({
      jobId: after.jobId,
      scheduledTime: after.scheduledTime,
      writes: cost,
      partitions: [...new Set(partitions)],
    });
  }

  /** The entries of the named index; DynamoDB rejects a query on an index the table does not have. */
  entries(indexName: string): Row[] {
    if (indexName !== INDEX.name) {
      throw Object.assign(new Error(`The table does not have the specified index: ${indexName}`), {
        name: 'ValidationException',
        $metadata: { httpStatusCode: 400 },
      });
    }
    return [...this.table.values()].flatMap((row): Row[] => {
      const entry = entryOf(row);
      return entry === undefined ? [] : [entry];
    });
  }

  /** The LastEvaluatedKey of an item: the table key, plus the index key when it came from the index. */
  keyOf(item: Row, indexName: string | undefined): Row {
    const names: string[] = [OCCURRENCE_TABLE.partitionKey, OCCURRENCE_TABLE.sortKey];
    if (indexName !== undefined) names.push(INDEX.partitionKey);
    return Object.fromEntries(names.map((n) => [n, item[n]]));
  }

  reset(): void {
    this.log.length = 0;
  }
}

/** The index entry of a row, or undefined when the row lacks the index key (a sparse index leaves it out). */
export function entryOf(row: Row): Row | undefined {
  if (typeof row[INDEX.partitionKey] !== 'string' || typeof row[INDEX.sortKey] !== 'string') return undefined;
  return Object.fromEntries(
    ENTRY_ATTRIBUTES.filter((a) => row[a] !== undefined).map((a) => [a, structuredClone(row[a])]),
  );
}

function writeCost(old: Row | undefined, next: Row | undefined): number {
  if (old === undefined || next === undefined) return old === next ? 0 : 1;
  if (old[INDEX.partitionKey] !== next[INDEX.partitionKey] || old[INDEX.sortKey] !== next[INDEX.sortKey]) return 2;
  return JSON.stringify(old) === JSON.stringify(next) ? 0 : 1;
}
