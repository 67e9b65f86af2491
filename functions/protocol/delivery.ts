/**
 * One queue message as the worker hands it to the protocol, and what came of it: the types between the worker
 * handler (functions/worker.ts) and processDelivery (process-delivery.ts), apart from both so that the modules
 * process-delivery.ts calls (resumable-delivery.ts) can name them without importing it back.
 */
import { ScheduledJobsError } from './errors';

/** One SQS message of the job queue. */
export interface Delivery {
  readonly messageId: string;
  readonly body: string;
  readonly receiptHandle: string;
}

/** What a delivery came to; ACK_RESULTS in process-delivery.ts says which of them acknowledge the message. */
export type DeliveryResult =
  | 'succeeded'
  | 'adopted-committed-report'
  | 'already-finished'
  | 'held-elsewhere'
  | 'duplicate-of-waiting-retry'
  | 'deferred-until-due'
  | 'retry-scheduled'
  | 'failed'
  | 'lease-lost'
  /** A resumable job yielded; the occurrence continues in a fresh invocation (resumable-delivery.ts). */
  | 'continued'
  | 'invalid-message'
  | 'outcome-not-recorded'
  | 'skipped'
  | 'buffered'
  /** Over its job's maxConcurrency: recorded WAITING, woken when a unit frees (concurrency-cap.ts). */
  | 'waiting';

/** A delivery's result and whether the message is acknowledged. */
export interface DeliveryOutcome {
  /** False: report the message as a batch item failure so SQS delivers it again. */
  readonly ack: boolean;
  readonly result: DeliveryResult;
  /** failed: the error recorded (the pause after failures quotes it). */
  readonly lastError?: string;
}

/**
 * A delivery whose outcome asks for the message again: thrown by the worker handler so that the batch processor
 * reports the message as failed, and SQS delivers it again (after its hidden time).
 */
export class DeliveryNotAcknowledgedError extends ScheduledJobsError {
  override readonly name = 'DeliveryNotAcknowledgedError';

  constructor(
    messageId: string,
    readonly result: DeliveryResult,
  ) {
    super(`message ${messageId} not acknowledged: ${result}`);
  }
}
