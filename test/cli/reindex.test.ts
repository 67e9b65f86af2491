/**
 * `occurrences reindex` with fakes: which entries it moves where, what it counts, how it retries a throttled write or
 * read and reports what still failed (exit 1), and what it prints. The same command on moto, with real conditional
 * writes, is in test/integration/status-index.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { LEGACY_OPEN_PREFIXES, type ReindexSources, reindex } from '../../bin/occurrences/commands/reindex';
import { runCli } from '../../bin/occurrences/program';
import type { Target } from '../../bin/occurrences/target';
import { DependencyError } from '../../functions/protocol/errors';
import { type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { type IndexedOccurrence, LEGACY_STATUS_INDEX_SHARDS, shardOf } from '../../functions/protocol/table-schema';
import { cliDeps } from './support';

const { PENDING, RUNNING, SUCCEEDED } = OccurrenceStatus;
const NOW = Date.parse('2026-11-30T12:00:00.000Z');

const entry = (jobId: string, status: Occurrence['status'], notifiedAt?: string): IndexedOccurrence => ({
  jobId,
  scheduledTime: '2026-11-30T10:00:00Z',
  status,
  attempt: 1,
  ...(notifiedAt === undefined ? {} : { notifiedAt }),
});

/** A reader whose legacy shards hold these entries (each under its status's own key), and a store that records moves. */
function fakes(entries: IndexedOccurrence[], move: ReindexSources['store']['moveIndexKey'] = async () => true) {
  const legacyKey = (e: IndexedOccurrence) => `${e.status}#${shardOf(e, LEGACY_STATUS_INDEX_SHARDS)}`;
  const reads: string[] = [];
  const sources = {
    reader: {
      async *shardPages(shard: string) {
        reads.push(shard);
        yield entries.filter((e) => legacyKey(e) === shard);
      },
    },
    store: { moveIndexKey: vi.fn(move) },
  };
  return { sources, reads };
}

const throttled = () => new DependencyError('transient', 'move the status index key', new Error('ThrottlingException'));

describe('reindex', () => {
  it('reads every legacy shard of the open statuses, and moves each entry to OPEN#k or out of the index', async () => {
    const announced = entry('announced', SUCCEEDED, '2026-11-30T10:00:05.000Z');
    const { sources, reads } = fakes([entry('pending', PENDING), entry('unannounced', SUCCEEDED), announced]);

    const counts = await reindex(sources, { dryRun: false });

    expect(counts).toEqual({ examined: 3, movedToOpen: 2, removed: 1, changedMeanwhile: 0, errors: 0 });
    expect(reads).toHaveLength(LEGACY_OPEN_PREFIXES.length * LEGACY_STATUS_INDEX_SHARDS);
    expect(reads.filter((s) => /^(FAILED|SKIPPED|CANCELLED|OPEN)#/.test(s))).toEqual([]);
    // In shard order: sorted here by job.
    const moves = sources.store.moveIndexKey.mock.calls.map(([key, move]) => [key.jobId, move]).sort();
    // From the shard of before (64) to the shard of now (128).
    const key = (jobId: string) => ({ jobId, scheduledTime: '2026-11-30T10:00:00Z' });
    const old = (jobId: string) => shardOf(key(jobId), LEGACY_STATUS_INDEX_SHARDS);
    const shard = (jobId: string) => shardOf(key(jobId));
    expect(moves).toEqual([
      ['announced', { from: `SUCCEEDED#${old('announced')}`, to: undefined, announced: true }],
      ['pending', { from: `PENDING#${old('pending')}`, to: `OPEN#${shard('pending')}` }],
      [
        'unannounced',
        { from: `SUCCEEDED#${old('unannounced')}`, to: `OPEN#${shard('unannounced')}`, announced: false },
      ],
    ]);
  });

  it('with --dry-run counts the same and writes nothing', async () => {
    const { sources } = fakes([entry('running', RUNNING), entry('announced', SUCCEEDED, '2026-11-30T10:00:05.000Z')]);
    expect(await reindex(sources, { dryRun: true })).toEqual({
      examined: 2,
      movedToOpen: 1,
      removed: 1,
      changedMeanwhile: 0,
      errors: 0,
    });
    expect(sources.store.moveIndexKey).not.toHaveBeenCalled();
  });

  it('counts a refused conditional write as changed meanwhile, and retries a throttled one', async () => {
    let calls = 0;
    const { sources } = fakes([entry('claimed', PENDING), entry('throttled-once', RUNNING)], async (key) => {
      if (key.jobId === 'claimed') return false;
      if (++calls === 1) throw throttled();
      return true;
    });
    vi.useFakeTimers();
    try {
      const run = reindex(sources, { dryRun: false });
      await vi.runAllTimersAsync();
      expect(await run).toMatchObject({ examined: 2, movedToOpen: 1, changedMeanwhile: 1, errors: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a write that keeps failing and a shard that cannot be read, goes on, and the CLI exits 1', async () => {
    const { sources } = fakes([entry('stuck', PENDING), entry('fine', RUNNING)], async (key) => {
      if (key.jobId === 'stuck') throw throttled();
      return true;
    });
    const reader = sources.reader;
    const failing = {
      async *shardPages(shard: string) {
        if (shard === 'BUFFERED#3') throw new DependencyError('fatal', 'list occurrences', new Error('AccessDenied'));
        yield* reader.shardPages(shard);
      },
    };
    const deps = cliDeps({ now: () => NOW });
    const connect = async () => ({ reader: failing, store: sources.store, where: 'table t' }) as unknown as Target;
    vi.useFakeTimers();
    try {
      const code = runCli(['reindex', '--table', 't'], { ...deps, connect });
      await vi.runAllTimersAsync();
      expect(await code).toBe(1);
    } finally {
      vi.useRealTimers();
    }
    const out = deps.captured.text();
    expect(out).toContain('2 entries under legacy keys');
    expect(out).toContain('moved 1 to OPEN#k');
    expect(out).toContain('2 error(s)');
    const err = deps.captured.err.join('\n');
    expect(err).toMatch(/could not move stuck 2026-11-30T10:00:00Z from PENDING#\d+: .*ThrottlingException/);
    expect(err).toContain('could not read BUFFERED#3');
  });
});
