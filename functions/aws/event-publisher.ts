/**
 * Puts state-change events on an EventBridge bus (PutEvents), ten at a time, in order.
 *
 * PutEvents answers per entry: a call can succeed while some of its entries failed (`FailedEntryCount`, an
 * `ErrorCode` per entry). Each failure is classified: throttling and EventBridge's internal failures are transient
 * and retried here, those entries only, a few times with a growing delay; anything else (access denied, a malformed
 * entry, a bus that does not exist) is fatal and not retried here. The caller learns, in order, how many events are
 * on the bus before the first one that is not, and why that one is not; it reports that record to the stream, whose
 * own retries (and on-failure destination) keep it. An event after a failed one is not put: the stream redelivers
 * from the failed record, and what this call put after it would be put twice.
 *
 * The client is a port with PutEvents' request and response shape (PutEventsClient): the SDK's EventBridgeClient
 * in the function (sdkPutEventsClient), a scripted one in the unit tests.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { type FailureKind, messageOf } from '../protocol/errors';
import { EVENT_SOURCE, type StateChangeEvent } from '../protocol/occurrence-events';
import { delay } from '../protocol/transient-retry';
import { classifyAwsError } from './classify-error';

/** PutEvents' request, as much of it as this stack sends. */
export interface PutEventsInput {
  readonly Entries: readonly {
    readonly Source: string;
    readonly DetailType: string;
    readonly Detail: string;
    readonly EventBusName: string;
    readonly Time: Date;
  }[];
}

/** PutEvents' response: one entry per request entry, in order, an EventId or an ErrorCode. */
export interface PutEventsOutput {
  readonly FailedEntryCount?: number;
  readonly Entries?: readonly {
    readonly EventId?: string;
    readonly ErrorCode?: string;
    readonly ErrorMessage?: string;
  }[];
}

/** The one call the publisher makes (sdkPutEventsClient wraps the SDK's client in it). */
export interface PutEventsClient {
  putEvents(input: PutEventsInput): Promise<PutEventsOutput>;
}

/** PutEvents takes at most ten entries a call. */
export const PUT_EVENTS_MAX_ENTRIES = 10;
/** Calls per batch of entries, the first included, before a transient failure is handed to the stream. */
export const PUT_EVENTS_ATTEMPTS = 3;
const FIRST_RETRY_DELAY_MS = 100;

/** EventBridge's per-entry error codes worth another try (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsResultEntry.html). */
const TRANSIENT_ENTRY_CODES = new Set(['ThrottlingException', 'InternalFailure', 'InternalException']);

/** Why one event is not on the bus. */
export interface PutFailure {
  readonly kind: Exclude<FailureKind, 'conditional'>;
  readonly code: string;
  readonly message: string;
}

/** How far a publish got: `put` events are on the bus, in order; `failure`, if any, stopped the one after them. */
export interface PublishResult {
  readonly put: number;
  readonly failure?: PutFailure;
}

export interface EventBridgePublisherOptions {
  /** The bus's name or ARN: `default`, or the bus the stack was given. */
  readonly eventBusName: string;
  /** Waits between retries; injected so that tests do not wait. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export class EventBridgePublisher {
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly client: PutEventsClient,
    private readonly options: EventBridgePublisherOptions,
  ) {
    this.sleep = options.sleep ?? ((ms) => delay(ms));
  }

  /** Put the events in order; stops at the first that cannot be put (see the top of this file). */
  async publish(events: readonly StateChangeEvent[]): Promise<PublishResult> {
    let put = 0;
    for (let at = 0; at < events.length; at += PUT_EVENTS_MAX_ENTRIES) {
      const chunk = events.slice(at, at + PUT_EVENTS_MAX_ENTRIES);
      const results = await this.putChunk(chunk);
      const failed = results.findIndex((r) => r !== undefined);
      if (failed >= 0) return { put: put + failed, failure: results[failed] };
      put += chunk.length;
    }
    return { put };
  }

  /** Each entry's failure (undefined: put), after retrying the transient ones. */
  private async putChunk(chunk: readonly StateChangeEvent[]): Promise<(PutFailure | undefined)[]> {
    const results: (PutFailure | undefined)[] = chunk.map(() => ({ kind: 'transient', code: '', message: '' }));
    for (let attempt = 1; attempt <= PUT_EVENTS_ATTEMPTS; attempt++) {
      const pending = results.flatMap((r, i) => (r?.kind === 'transient' ? [i] : []));
      if (pending.length === 0) break;
      if (attempt > 1) await this.sleep(FIRST_RETRY_DELAY_MS * 2 ** (attempt - 2));
      const answers = await this.call(pending.map((i) => chunk[i]));
      pending.forEach((i, n) => {
        results[i] = answers[n];
      });
    }
    return results;
  }

  /** One PutEvents: each entry's failure, or undefined when it was put. A failed call fails every entry alike. */
  private async call(entries: readonly StateChangeEvent[]): Promise<(PutFailure | undefined)[]> {
    let output: PutEventsOutput;
    try {
      output = await this.client.putEvents({ Entries: entries.map((e) => this.entryOf(e)) });
    } catch (error) {
      const kind = classifyAwsError(error) === 'transient' ? 'transient' : 'fatal';
      const failure: PutFailure = { kind, code: (error as Error).name ?? 'Error', message: messageOf(error) };
      return entries.map(() => failure);
    }
    return entries.map((_, i) => entryFailure(output.Entries?.[i]));
  }

  private entryOf(event: StateChangeEvent): PutEventsInput['Entries'][number] {
    return {
      Source: EVENT_SOURCE,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
      EventBusName: this.options.eventBusName,
      Time: new Date(event.time),
    };
  }
}

/** An entry of the response as a failure, or undefined when it carries an EventId. */
function entryFailure(entry: NonNullable<PutEventsOutput['Entries']>[number] | undefined): PutFailure | undefined {
  // A response with fewer entries than the request says nothing about the missing ones: try them again.
  if (entry === undefined) return { kind: 'transient', code: 'MissingEntry', message: 'no result for this entry' };
  if (entry.ErrorCode === undefined && entry.EventId !== undefined) return undefined;
  const code = entry.ErrorCode ?? 'NoEventId';
  return {
    kind: TRANSIENT_ENTRY_CODES.has(code) ? 'transient' : 'fatal',
    code,
    message: entry.ErrorMessage ?? code,
  };
}

/**
 * The SDK's EventBridgeClient as a PutEventsClient; by default one with the SDK's standard settings (region,
 * credentials, AWS_ENDPOINT_URL), as functions/aws/clients.ts makes the others.
 */
export function sdkPutEventsClient(client: EventBridgeClient = new EventBridgeClient({})): PutEventsClient {
  return { putEvents: (input) => client.send(new PutEventsCommand({ Entries: [...input.Entries] })) };
}
