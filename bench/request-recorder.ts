/**
 * Counts AWS requests below the SDK: a middleware in the `deserialize` step runs once per HTTP attempt, inside the
 * SDK's retry loop, so a retried call counts once per attempt, as AWS bills it. It sits at low priority, inside
 * serializeEmulatorRequests' lock, so the time it records is the emulator's answer, not the wait for the lock.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { HttpRequest, HttpResponse } from '@smithy/types';

/**
 * The handler (trigger, worker, notifier, reconciler) whose invocation is running: BenchSession.timed runs each
 * invocation inside it, so a request made by the shared module clients is told apart by who made it.
 */
export const currentHandler = new AsyncLocalStorage<string>();

/** Who made a request: a handler (billed to the user), Lambda's event source (billed too), or the bench itself. */
export type RequestRole = 'handler' | 'event-source' | 'driver';

export interface RecordedRequest {
  readonly service: string;
  readonly operation: string;
  readonly role: RequestRole;
  /** The HTTP status of the answer, or undefined when the attempt failed without one (a network error). */
  readonly status: number | undefined;
  readonly durationMs: number;
  /** Bytes of the request body (the SNS publish payload is billed per byte). */
  readonly requestBytes: number;
  /** performance.now() when the attempt went out: the tick figure takes the union of the requests' intervals. */
  readonly startMs: number;
  /** For SQS: the queue the request named, so the event source's receives on the job queue can be told apart. */
  readonly queueUrl?: string;
  /** For SQS receives: how many messages came back (a long poll that times out is an empty receive). */
  readonly messages?: number;
  /** The handler whose invocation made it (BenchSession.timed), for role 'handler'. */
  readonly handler?: string;
}

/** What a DynamoDB observer sees of each attempt: the wire-format request and, when parseable, the response. */
export interface DynamoExchange {
  readonly operation: string;
  readonly request: Record<string, unknown>;
  readonly response: Record<string, unknown> | undefined;
  readonly status: number | undefined;
}

/**
 * Called before and after each DynamoDB attempt, inside the emulator lock (no other serialized request runs
 * meanwhile), so an observer may read the item before and after a write from a client of its own.
 */
export interface DynamoObserver {
  before?(operation: string, request: Record<string, unknown>): Promise<void>;
  after(exchange: DynamoExchange): Promise<void>;
}

export class RequestRecorder {
  readonly requests: RecordedRequest[] = [];
  dynamoObserver: DynamoObserver | undefined;
  private paused = false;

  /** Requests made while paused are not recorded (the bench's own inspection between phases). */
  async whilePaused<T>(work: () => Promise<T>): Promise<T> {
    this.paused = true;
    try {
      return await work();
    } finally {
      this.paused = false;
    }
  }

  record(request: RecordedRequest): void {
    if (!this.paused) this.requests.push(request);
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Empties the record and returns what was in it. */
  take(): RecordedRequest[] {
    return this.requests.splice(0, this.requests.length);
  }
}

type Next = (args: { request: unknown }) => Promise<{ response: unknown }>;
interface Context {
  readonly clientName?: string;
  readonly commandName?: string;
}
interface StackLike {
  add(middleware: (next: Next, context: Context) => Next, options: object): void;
}

export const RECORDER_MIDDLEWARE_NAME = 'benchRequestRecorder';

/** Adds the recording middleware to a client (idempotent: a second call replaces the first). */
export function recordRequests(
  client: { middlewareStack: unknown },
  recorder: RequestRecorder,
  role: RequestRole | ((service: string, operation: string, queueUrl: string | undefined) => RequestRole),
): void {
  const stack = client.middlewareStack as StackLike;
  stack.add(
    (next, context) => async (args) => {
      const service = serviceName(context);
      const operation = operationName(context);
      const request = args.request as HttpRequest;
      const body = jsonBody(request);
      const requestBytes = bodyBytes(request);
      const queueUrl = typeof body?.QueueUrl === 'string' ? body.QueueUrl : undefined;
      const who = typeof role === 'function' ? role(service, operation, queueUrl) : role;
      // Only the handlers' requests are priced; the bench's own reads of the table are not the stack's cost.
      const observe =
        service === 'DynamoDB' && who === 'handler' && !recorder.isPaused ? recorder.dynamoObserver : undefined;
      if (observe?.before && body) await observe.before(operation, body);
      const started = performance.now();
      let status: number | undefined;
      const record = (messages?: number) =>
        recorder.record({
          service,
          operation,
          role: who,
          status,
          durationMs: performance.now() - started,
          startMs: started,
          requestBytes,
          queueUrl,
          messages,
          handler: currentHandler.getStore(),
        });
      try {
        const result = await next(args);
        const response = result.response as HttpResponse;
        status = response.statusCode;
        const needsBody = observe !== undefined || operation === 'ReceiveMessage';
        const parsed = needsBody ? await bufferJsonBody(response) : undefined;
        record(operation === 'ReceiveMessage' ? messageCount(parsed) : undefined);
        if (observe && body) await observe.after({ operation, request: body, response: parsed, status });
        return result;
      } catch (error) {
        // An attempt that got no HTTP response (a network error) is still one the service may bill.
        if (status === undefined) record();
        throw error;
      }
    },
    { step: 'deserialize', priority: 'low', name: RECORDER_MIDDLEWARE_NAME, override: true },
  );
}

function serviceName(context: Context): string {
  const name = (context.clientName ?? 'Unknown').replace(/Client$/, '');
  return name;
}

function operationName(context: Context): string {
  return (context.commandName ?? 'Unknown').replace(/Command$/, '');
}

function bodyBytes(request: HttpRequest | undefined): number {
  const raw = request?.body as unknown;
  if (raw instanceof Uint8Array) return raw.length;
  return typeof raw === 'string' ? Buffer.byteLength(raw) : 0;
}

/** The JSON protocols (DynamoDB, Streams, SQS) send the input as JSON (bytes by now); others yield undefined. */
function jsonBody(request: HttpRequest | undefined): Record<string, unknown> | undefined {
  const raw = request?.body as unknown;
  const body = raw instanceof Uint8Array ? new TextDecoder().decode(raw) : raw;
  if (typeof body !== 'string' || !body.startsWith('{')) return undefined;
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Reads a JSON response body and puts the bytes back (as a Uint8Array, which the SDK's body collector takes as is),
 * so the deserializer after us still reads the whole answer.
 */
async function bufferJsonBody(response: HttpResponse): Promise<Record<string, unknown> | undefined> {
  const body = response.body as unknown;
  if (body === undefined || body === null) return undefined;
  const bytes = await collect(body);
  response.body = bytes;
  const text = new TextDecoder().decode(bytes);
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

async function collect(body: unknown): Promise<Uint8Array> {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);
  }
  return Buffer.concat(chunks);
}

function messageCount(parsed: Record<string, unknown> | undefined): number {
  const messages = parsed?.Messages;
  return Array.isArray(messages) ? messages.length : 0;
}
