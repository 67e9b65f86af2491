/**
 * The job queue as SQS and Lambda's event source mapping behave for the worker: a received message is hidden for
 * the visibility timeout and comes back unless it is deleted; ChangeMessageVisibility works with the current
 * receipt handle only; past maxReceiveCount a message goes to the DLQ; the poller hands out up to five visible
 * messages per invocation, within a second of them becoming visible.
 */
import type { VirtualTime } from './virtual-time';

export interface QueuedMessage {
  readonly id: string;
  readonly body: string;
  visibleAt: number;
  receiveCount: number;
  receipt: string | undefined;
}

export interface Received {
  readonly id: string;
  readonly receipt: string;
  readonly body: string;
  readonly receiveCount: number;
}

const BATCH_SIZE = 5;

export class JobQueue {
  private readonly messages = new Map<string, QueuedMessage>();
  private sent = 0;
  private receipts = 0;
  movedToDlq = 0;

  constructor(
    private readonly vt: VirtualTime,
    private readonly limits: { readonly queueVisibilityTimeoutSeconds: number; readonly maxReceiveCount: number },
    /** Uniform [0, 1): the poller's delay. */
    private readonly random: () => number,
    private readonly note: (what: string) => void,
    /** Lambda invokes the worker with a batch. */
    private readonly invoke: (batch: Received[]) => void,
  ) {}

  get size(): number {
    return this.messages.size;
  }

  send(body: string): string {
    const id = `msg-${++this.sent}`;
    this.messages.set(id, { id, body, visibleAt: this.vt.now, receiveCount: 0, receipt: undefined });
    this.schedulePoll(this.vt.now);
    return id;
  }

  changeVisibility(receiptHandle: string, seconds: number): void {
    const m = [...this.messages.values()].find((x) => x.receipt === receiptHandle);
    if (m === undefined) {
      throw Object.assign(new Error('The receipt handle has expired'), {
        name: 'ReceiptHandleIsInvalid',
        $metadata: { httpStatusCode: 400 },
      });
    }
    m.visibleAt = this.vt.now + seconds * 1000;
    this.schedulePoll(m.visibleAt);
  }

  /** Lambda deletes what the batch did not report as failed; SQS ignores a receipt handle that is no longer current. */
  delete(id: string, receipt: string): boolean {
    if (this.messages.get(id)?.receipt !== receipt) return false;
    this.messages.delete(id);
    return true;
  }

  private schedulePoll(at: number): void {
    this.vt.scheduleSystem(at - this.vt.now + Math.floor(this.random() * 1000), () => this.poll());
  }

  private poll(): void {
    const visible = [...this.messages.values()].filter((m) => m.visibleAt <= this.vt.now).slice(0, BATCH_SIZE);
    const batch: Received[] = [];
    for (const m of visible) {
      m.receiveCount++;
      if (m.receiveCount > this.limits.maxReceiveCount) {
        this.messages.delete(m.id);
        this.movedToDlq++;
        this.note(`${m.id} moved to the job DLQ after ${this.limits.maxReceiveCount} receives`);
        continue;
      }
      m.receipt = `rh-${++this.receipts}`;
      m.visibleAt = this.vt.now + this.limits.queueVisibilityTimeoutSeconds * 1000;
      this.schedulePoll(m.visibleAt);
      batch.push({ id: m.id, receipt: m.receipt, body: m.body, receiveCount: m.receiveCount });
    }
    if (batch.length > 0) this.invoke(batch);
  }
}
