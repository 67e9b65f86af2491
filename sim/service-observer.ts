/**
 * What only the service side can see while a run executes: every request as it is applied to the fakes, and every
 * change of the occurrence row. From these the invariants learn of overwritten reports, writes by a worker that no
 * longer held the row, and when each lease was due to expire.
 */
import { isJobStateKey } from '../functions/protocol/job-state';
import { iso } from '../functions/protocol/occurrence';
import type { SdkCommand } from './calls';
import type { Row } from './fakes/dynamo-expressions';
import type { FakeAws } from './fakes/fake-aws';
import type { JobStateWriteRecord, StaleWrite, TraceLine } from './outcome';
import type { Actor, VirtualTime } from './virtual-time';

/** A request's result as the service produced it, before the network decides what the caller gets. */
export type Applied = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** The claim is the one update that counts an attempt. */
const CLAIM_UPDATE = '#attempt = #attempt + :one';

export class ServiceObserver {
  readonly overwrites: TraceLine[] = [];
  /** When the report object was first written (true time). */
  firstCommitAt: number | undefined;
  /** Every applied write of an object (PutObject, CompleteMultipartUpload), by key (true time). */
  readonly commitsAt = new Map<string, number[]>();
  readonly staleWrites: StaleWrite[] = [];
  lateUncontestedWrites = 0;
  claims = 0;
  /** When each lease's claim was applied (true time): the first application, not an SDK retry's read-back. */
  readonly claimsApplied = new Map<string, number>();
  /** The last expiry the table recorded for each lease (claim or extend). */
  readonly leaseExpiries = new Map<string, number>();
  /** When the row became SUCCEEDED or FAILED, true time. */
  finishedAt: number | undefined;
  /** Every applied write of the job-state row, by whom, with the row before and after (the policy world's P8-P10). */
  readonly jobStateWrites: JobStateWriteRecord[] = [];

  constructor(
    private readonly aws: FakeAws,
    private readonly vt: VirtualTime,
    private readonly t0: number,
    private readonly note: (who: string, what: string) => void,
  ) {}

  /** Apply one request to the fakes by `send`, and check what it did. */
  async apply(actor: Actor, op: string, label: string, command: SdkCommand, send: () => Promise<unknown>) {
    const input = command.input;
    const rowBefore = op === 'UpdateItem' ? this.rowOf(command) : undefined;
    const existed = op === 'PutObject' ? this.aws.objects.has(input.Key as string) : false;
    let result: Applied;
    try {
      result = { ok: true, value: await send() };
    } catch (error) {
      result = { ok: false, error };
    }
    this.note('aws', `${actor.name} ${label} → ${result.ok ? 'ok' : (result.error as Error).name}`);
    if (!result.ok) return result;
    if (op === 'PutObject') this.objectWritten(actor, input.Key as string, existed);
    // The multipart complete goes by its command's name (calls.ts maps only the protocol's table and queue calls).
    if (op === 'PutObject' || op.startsWith('CompleteMultipartUpload')) {
      const key = input.Key as string;
      this.commitsAt.set(key, [...(this.commitsAt.get(key) ?? []), this.vt.now]);
    }
    if (op === 'UpdateItem') this.rowUpdated(actor, label, command, rowBefore);
    return result;
  }

  /** The table's view: the row as each write left it. */
  rowWritten(after: Row): void {
    if (after.status === 'RUNNING')
      this.leaseExpiries.set(String(after.leaseId), Date.parse(String(after.leaseExpiresAt)));
    if (this.finishedAt === undefined && (after.status === 'SUCCEEDED' || after.status === 'FAILED'))
      this.finishedAt = this.vt.now;
  }

  private objectWritten(actor: Actor, key: string, existed: boolean): void {
    if (existed) this.overwrites.push({ t: this.vt.now - this.t0, who: actor.name, what: `overwrote ${key}` });
    else this.firstCommitAt = this.vt.now;
  }

  /** A fenced write by a worker must change nothing unless the worker held the row when it arrived. */
  private rowUpdated(actor: Actor, label: string, command: SdkCommand, rowBefore: Row | undefined): void {
    const input = command.input;
    if (isJobStateKey(command.input.Key as { scheduledTime: string })) {
      const after = this.rowOf(command);
      if (after !== undefined) this.jobStateWrites.push({ at: this.vt.now, who: actor.name, before: rowBefore, after });
      return;
    }
    const leaseId = input.ExpressionAttributeValues?.[':leaseId'] as string | undefined;
    const isClaim = String(input.UpdateExpression).includes(CLAIM_UPDATE);
    if (isClaim) this.claims++;
    if (isClaim && leaseId !== undefined && !this.claimsApplied.has(leaseId)) {
      if (this.rowOf(command)?.leaseId === leaseId) this.claimsApplied.set(leaseId, this.vt.now);
    }
    if (actor.kind !== 'worker' || leaseId === undefined || isClaim) return;
    const rowAfter = this.rowOf(command);
    const held = rowBefore?.status === 'RUNNING' && rowBefore.leaseId === leaseId;
    if (!held && JSON.stringify(rowBefore) !== JSON.stringify(rowAfter)) {
      this.staleWrites.push({
        t: this.vt.now - this.t0,
        who: actor.name,
        what: label,
        rowBefore: `${rowBefore?.status} under ${rowBefore?.leaseId}`,
      });
    } else if (held && String(rowBefore.leaseExpiresAt) < iso(this.vt.now)) {
      this.lateUncontestedWrites++;
    }
  }

  private rowOf(command: SdkCommand): Row | undefined {
    const key = command.input.Key as { jobId: string; scheduledTime: string };
    return this.aws.row(key.jobId, key.scheduledTime);
  }
}
