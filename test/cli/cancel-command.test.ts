/**
 * `occurrences cancel` (bin/occurrences/commands/cancel.ts): what it prints and returns for each kind of row, over the
 * real operator store on the stateful fake table, and its argument errors through the command line (no write, exit 2).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCancel } from '../../bin/occurrences/commands/cancel';
import { describeOccurrence } from '../../bin/occurrences/commands/show';
import { runCli } from '../../bin/occurrences/program';
import { OperatorOccurrenceStore } from '../../functions/aws/occurrence-store';
import { iso, type Occurrence, OccurrenceStatus } from '../../functions/protocol/occurrence';
import { statusReason } from '../../functions/protocol/status-reason';
import { FakeAws } from '../../sim/fakes/fake-aws';
import { indexed } from '../aws/fixtures';
import { cliDeps, context, HOURLY, row } from './support';

const { PENDING, RUNNING, SUCCEEDED, CANCELLED } = OccurrenceStatus;
const NOW = Date.parse('2026-11-30T06:00:30.000Z');
const TIME = '2026-11-30T06:00:00Z';
const KEY = { jobId: HOURLY, scheduledTime: TIME };
let aws: FakeAws;
let store: OperatorOccurrenceStore;

beforeEach(() => {
  aws = new FakeAws(() => NOW);
  store = new OperatorOccurrenceStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })), 't');
});
afterEach(() => aws.restore());

const seed = (o: Occurrence) =>
  aws.table.set(`${o.jobId}|${o.scheduledTime}`, indexed(o) as unknown as Record<string, unknown>);
const stored = () => aws.row(HOURLY, TIME);

describe('occurrences cancel', () => {
  it('cancels a RUNNING occurrence and says when its worker stops at the latest', async () => {
    const leaseExpiresAt = iso(NOW + 60_000);
    seed(row(HOURLY, TIME, RUNNING, NOW, { leaseId: 'L1', leaseOwner: 'worker/7', leaseExpiresAt }));
    const ctx = context({ now: () => NOW });

    const result = await runCancel(ctx, store, KEY, { by: 'alice@host', note: 'upstream broken' });

    expect(result.outcome).toBe('cancelled');
    expect(ctx.captured.out).toEqual([
      `cancelled ${HOURLY} ${TIME} as alice@host: it was RUNNING (attempt 1, worker/7); its worker stops at its next ` +
        `heartbeat, by ${leaseExpiresAt} at the latest, and commits no report.`,
    ]);
    expect(stored()).toMatchObject({
      status: CANCELLED,
      cancelledByOperator: 'alice@host',
      cancelNote: 'upstream broken',
    });
  });

  it('cancels a PENDING occurrence: it will not run', async () => {
    seed(row(HOURLY, TIME, PENDING, NOW));
    const ctx = context({ now: () => NOW });
    await runCancel(ctx, store, KEY, { by: 'alice@host' });
    expect(ctx.captured.out).toEqual([`cancelled ${HOURLY} ${TIME} as alice@host: it was PENDING; it will not run.`]);
  });

  it('refuses a SUCCEEDED occurrence with the reason on stderr, and changes nothing', async () => {
    seed(row(HOURLY, TIME, SUCCEEDED, NOW, { reportKey: 'reports/hourly-report/x.csv' }));
    const before = structuredClone(stored());
    const ctx = context({ now: () => NOW });

    expect(await runCancel(ctx, store, KEY, { by: 'alice@host' })).toMatchObject({
      outcome: 'refused',
      status: SUCCEEDED,
    });
    expect(ctx.captured.err).toEqual([
      `refused to cancel ${HOURLY} ${TIME}: it SUCCEEDED and its report is at reports/hourly-report/x.csv: nothing to cancel`,
    ]);
    expect(ctx.captured.out).toEqual([]);
    expect(stored()).toEqual(before);
  });

  it('refuses an unknown occurrence without creating a row', async () => {
    const ctx = context({ now: () => NOW });
    expect(await runCancel(ctx, store, KEY, { by: 'alice@host' })).toEqual({
      outcome: 'refused',
      reason: 'there is no such occurrence',
    });
    expect(ctx.captured.err).toEqual([`refused to cancel ${HOURLY} ${TIME}: there is no such occurrence`]);
    expect(stored()).toBeUndefined();
  });

  it.each([
    ['a scheduled time without a zone', [HOURLY, '2026-11-30T06:00:00'], /^error: <scheduledTime>: .*with a zone/],
    ['a note too long', [HOURLY, TIME, '--note', 'x'.repeat(501)], /^error: --note: /],
    ['a missing scheduled time', [HOURLY], /missing required argument 'scheduledTime'/],
  ])('refuses %s with the usage, exit 2, before connecting', async (_case, args, message) => {
    const deps = cliDeps({ now: () => NOW });
    const code = await runCli(['cancel', ...args, '--table', 't', '--region', 'eu-west-1'], deps);
    expect(code).toBe(2);
    expect(deps.captured.err.join('\n')).toMatch(message);
    expect(aws.count('UpdateItem')).toBe(0);
  });
});

describe('show and list of an operator cancel', () => {
  it('show says who cancelled it, why, that its lease was revoked, and why there is no report; the history names who', async () => {
    seed(row(HOURLY, TIME, RUNNING, NOW, { leaseId: 'L1', leaseOwner: 'worker/7', leaseExpiresAt: iso(NOW + 60_000) }));
    await runCancel(context({ now: () => NOW }), store, KEY, { by: 'alice@host', note: 'upstream broken' });
    const ctx = context({ now: () => NOW });

    const text = describeOccurrence(ctx, stored() as unknown as Occurrence, undefined, undefined);

    expect(text).toMatch(
      /cancelled by +│ alice@host \(occurrences cancel\): this run's lease was revoked; its worker may have worked on until/,
    );
    expect(text).toMatch(/why cancelled +│ upstream broken/);
    expect(text).toMatch(/report +│ none: an operator cancelled it before any attempt reached its commit point/);
    expect(text).toMatch(/cancelled .*│ alice@host \(upstream broken\)/);
  });

  it('show explains a refused cancel: the commit point a lease reached', () => {
    const committing = row(HOURLY, TIME, RUNNING, NOW, {
      leaseId: 'L1',
      leaseExpiresAt: iso(NOW + 60_000),
      committingLease: 'L1',
      committingAt: iso(NOW - 1_000),
    });
    const text = describeOccurrence(context({ now: () => NOW }), committing, undefined, undefined);
    expect(text).toMatch(
      /commit point +│ this lease reached it .*: its report may be committed, so it cannot be cancelled/,
    );
  });

  it("list's one line of words names the operator and the note", () => {
    const cancelled = row(HOURLY, TIME, CANCELLED, NOW, {
      cancelledByOperator: 'alice@host',
      cancelNote: 'upstream broken',
    });
    expect(statusReason(cancelled)).toBe('cancelled by alice@host: upstream broken');
    expect(statusReason(row(HOURLY, TIME, CANCELLED, NOW, { cancelledBy: '2026-11-30T07:00:00Z' }))).toBe(
      'cancelled by 2026-11-30T07:00:00Z (overlap cancelOther)',
    );
  });
});
