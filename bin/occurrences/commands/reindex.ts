/**
 * `occurrences reindex [--dry-run]`: the upgrade step that moves status index entries written before the OPEN key
 * (functions/protocol/table-schema.ts) to where the new rule puts them. A row in flight, or a success not yet
 * announced, still under its status's own key (`PENDING#k`, `RUNNING#k`, `RETRY_WAIT#k`, `BUFFERED#k`, `SUCCEEDED#k`
 * without `notifiedAt`) moves to `OPEN#k`, where the reconciler looks; an announced success (`SUCCEEDED#k` with
 * `notifiedAt`) leaves the index. FAILED, SKIPPED and CANCELLED keep their keys: the rule did not change for them.
 *
 * It reads the legacy keys' 320 shards (5 prefixes × the 64 shards of before) a page at a time (never a Scan, never
 * more than a page in memory) and moves each entry with a conditional write: only while the row still has the legacy
 * key (and is, or is not, announced, as the entry said), so a row a worker changed meanwhile (its write already set
 * the new key) is left alone and counted.
 * A transient failure is retried a few times; a shard that still fails is counted and the command goes on, then
 * exits 1. Running it again is harmless: what it moved is no longer under a legacy key.
 */
import type { Command } from 'commander';
import { z } from 'zod';
import type { OperatorOccurrenceReader } from '../../../functions/aws/occurrence-reader';
import type { OperatorOccurrenceStore } from '../../../functions/aws/occurrence-store';
import { messageOf } from '../../../functions/protocol/errors';
import { isoSeconds, OccurrenceStatus, SCHEDULED_TIME_RANGE } from '../../../functions/protocol/occurrence';
import {
  expectedStatusShard,
  type IndexedOccurrence,
  indexShards,
  LEGACY_STATUS_INDEX_SHARDS,
} from '../../../functions/protocol/table-schema';
import { withTransientRetries } from '../../../functions/protocol/transient-retry';
import { parseArguments } from '../arguments';
import type { CommandContext, CommandSetup } from '../context';
import { EXIT } from '../errors';

const { PENDING, RUNNING, RETRY_WAIT, BUFFERED, SUCCEEDED } = OccurrenceStatus;

/** The key prefixes the open statuses had before they shared OPEN: each status's own. */
export const LEGACY_OPEN_PREFIXES: readonly OccurrenceStatus[] = [PENDING, RUNNING, RETRY_WAIT, BUFFERED, SUCCEEDED];

/** Tries of one write or one shard's read when it fails transiently (throttling), the first retry after 200 ms. */
const TRIES = 4;
const FIRST_RETRY_MS = 200;
/** Writes in flight at once, within one page. */
const WRITE_CONCURRENCY = 10;

/** Every scheduled time the table can hold (the upper bound is exclusive). */
const ALL_TIMES = {
  from: SCHEDULED_TIME_RANGE.earliest,
  to: isoSeconds(Date.parse(SCHEDULED_TIME_RANGE.latest) + 1000),
} as const;

export interface ReindexSources {
  readonly reader: Pick<OperatorOccurrenceReader, 'shardPages'>;
  readonly store: Pick<OperatorOccurrenceStore, 'moveIndexKey'>;
}

export interface ReindexCounts {
  /** Entries found under a legacy key. */
  readonly examined: number;
  /** Moved to `OPEN#k` (with --dry-run: would be). */
  readonly movedToOpen: number;
  /** Announced successes taken out of the index (with --dry-run: would be). */
  readonly removed: number;
  /** Rows no longer as their entry said when written to: a worker's write already gave them the new key. */
  readonly changedMeanwhile: number;
  /** Shards that could not be read, and writes that failed, after their retries. */
  readonly errors: number;
}

export function registerReindex(program: Command, setup: CommandSetup): void {
  program
    .command('reindex')
    .description(
      'upgrade step: move status index entries written before the OPEN key (PENDING#k ... SUCCEEDED#k) to OPEN#k, and take announced successes out of the index',
    )
    .option('--dry-run', 'count what would move, write nothing')
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(z.object({ dryRun: z.boolean().default(false) }), raw);
      const target = await setup.connect(cmd, {});
      const counts = await reindex(target, { dryRun: o.dryRun }, setup.deps);
      printCounts(setup.deps, counts, o.dryRun);
      if (counts.errors > 0) setup.setExitCode(EXIT.failed);
    });
}

/** Move every legacy entry (see the file's comment); with `dryRun`, only count. */
export async function reindex(
  sources: ReindexSources,
  options: { readonly dryRun: boolean; readonly signal?: AbortSignal },
  ctx?: Pick<CommandContext, 'io'>,
): Promise<ReindexCounts> {
  const counts = { examined: 0, movedToOpen: 0, removed: 0, changedMeanwhile: 0, errors: 0 };
  const retry = { attempts: TRIES, firstDelayMs: FIRST_RETRY_MS, signal: options.signal };
  for (const prefix of LEGACY_OPEN_PREFIXES) {
    for (const shard of indexShards(prefix, LEGACY_STATUS_INDEX_SHARDS)) {
      try {
        // A failed read starts the shard again: the entries already moved are no longer under it.
        await withTransientRetries(async () => {
          for await (const page of sources.reader.shardPages(shard, ALL_TIMES.from, ALL_TIMES.to, options.signal)) {
            await moveAll(sources, shard, page, options.dryRun, retry, counts, ctx);
          }
        }, retry);
      } catch (error) {
        counts.errors++;
        ctx?.io.err(`could not read ${shard}: ${messageOf(error)}; run reindex again to finish`);
      }
    }
  }
  return counts;
}

type Tally = { -readonly [K in keyof ReindexCounts]: number };

async function moveAll(
  sources: ReindexSources,
  shard: string,
  page: readonly IndexedOccurrence[],
  dryRun: boolean,
  retry: Parameters<typeof withTransientRetries>[1],
  counts: Tally,
  ctx?: Pick<CommandContext, 'io'>,
): Promise<void> {
  for (let i = 0; i < page.length; i += WRITE_CONCURRENCY) {
    await Promise.all(
      page.slice(i, i + WRITE_CONCURRENCY).map(async (entry) => {
        counts.examined++;
        const to = expectedStatusShard(entry);
        if (!dryRun) {
          // An announced success leaves; any other entry goes to OPEN, unless the row changed since the index said.
          const announced = entry.status === SUCCEEDED ? entry.notifiedAt !== undefined : undefined;
          try {
            const moved = await withTransientRetries(
              () => sources.store.moveIndexKey(entry, { from: shard, to, announced }),
              retry,
            );
            if (!moved) {
              counts.changedMeanwhile++;
              return;
            }
          } catch (error) {
            counts.errors++;
            ctx?.io.err(`could not move ${entry.jobId} ${entry.scheduledTime} from ${shard}: ${messageOf(error)}`);
            return;
          }
        }
        if (to === undefined) counts.removed++;
        else counts.movedToOpen++;
      }),
    );
  }
}

function printCounts(ctx: CommandContext, c: ReindexCounts, dryRun: boolean): void {
  const verb = dryRun ? 'would move' : 'moved';
  const removed = dryRun ? 'would take' : 'took';
  ctx.io.out(
    `${dryRun ? 'dry run: ' : ''}${c.examined} entr${c.examined === 1 ? 'y' : 'ies'} under legacy keys ` +
      `(${LEGACY_OPEN_PREFIXES.map((p) => `${p}#k`).join(', ')}); ${verb} ${c.movedToOpen} to OPEN#k, ` +
      `${removed} ${c.removed} announced success(es) out of the index` +
      (dryRun ? '' : `, ${c.changedMeanwhile} changed meanwhile (left as their writer set them)`) +
      `, ${c.errors} error(s)`,
  );
}
