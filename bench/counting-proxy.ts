/**
 * An HTTP proxy in front of moto that counts the AWS requests passing through it: the console runs in a process of
 * its own (bench/console-process.ts), so its SDK clients cannot take the request recorder's middleware
 * (request-recorder.ts); pointed at this proxy instead of moto, every request it makes is seen here, retries
 * included, as AWS would bill them. DynamoDB requests are named by their X-Amz-Target.
 *
 * Read units: moto answers ReturnConsumedCapacity with one unit per request whatever it read, so the proxy also models
 * what DynamoDB would bill (`modelReads`): the size of every item a read touched (item-size.ts, DynamoDB's documented
 * rule), a Query's or Scan's sizes summed and rounded up to 4 KB, a GetItem's or BatchGetItem's item by item, half a
 * unit per 4 KB for an eventually consistent read. A read with a projection or a filter is billed on the whole items
 * read, which its answer does not show: the proxy sends it again to moto without them (not counted) to size those.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { itemSize, type WireItem } from './item-size';

/** A read capacity unit covers 4 KB read strongly consistent, 8 KB eventually consistent. */
const READ_UNIT_BYTES = 4_096;
const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem']);

/** One request that went through the proxy. */
export interface ProxiedRequest {
  /** `DynamoDB`, `Scheduler`, `SQS`, `S3`, ... (from X-Amz-Target or the signature's credential scope). */
  readonly service: string;
  /** `Query`, `GetItem`, ...; for the REST services the method and path: `GET /schedules/x`. */
  readonly operation: string;
  readonly status: number;
  /** DynamoDB: the capacity units its answer reported (ConsumedCapacity), when it asked for them. */
  readonly capacityUnits?: number;
  /** DynamoDB reads, with `modelReads` on: the read units DynamoDB would bill for it. */
  readonly modelledReadUnits?: number;
}

export class CountingProxy {
  readonly requests: ProxiedRequest[] = [];
  /** Model each DynamoDB read's units (a second request to moto for a projected or filtered read: slower). */
  modelReads = false;

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>`: give this to the console as its endpoint. */
    readonly endpoint: string,
  ) {}

  /** Listens on 127.0.0.1 on a free port and forwards everything to `target` (moto's endpoint). */
  static async start(target: string): Promise<CountingProxy> {
    const upstream = new URL(target);
    let proxy: CountingProxy | undefined;
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const forwarded = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (answer) => {
            void readBody(answer).then(async (payload) => {
              const described = describeRequest(req, body, answer.statusCode ?? 0, payload);
              const model =
                proxy?.modelReads === true && described.service === 'DynamoDB' && READS.has(described.operation);
              const units = model
                ? await modelledReadUnits(target, req, described.operation, body, payload)
                : undefined;
              proxy?.requests.push(units === undefined ? described : { ...described, modelledReadUnits: units });
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(payload);
            });
          },
        );
        forwarded.on('error', (error) => {
          res.writeHead(502);
          res.end(String(error));
        });
        forwarded.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new CountingProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  /** Empties the record and returns what was in it. */
  take(): ProxiedRequest[] {
    return this.requests.splice(0, this.requests.length);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Requests by service and operation: `{ 'DynamoDB.Query': 10, 'Scheduler.GET /schedules/x': 1 }`. */
export function countByOperation(requests: readonly ProxiedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.service}.${r.operation}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

function describeRequest(req: IncomingMessage, body: Buffer, status: number, payload: Buffer): ProxiedRequest {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string' && target.startsWith('DynamoDB_')) {
    return { service: 'DynamoDB', operation: target.split('.')[1] ?? target, status, ...capacityOf(payload) };
  }
  if (typeof target === 'string') {
    // The other JSON protocols (SQS, Streams): `AmazonSQS.SendMessage`.
    return { service: serviceOf(req) ?? target.split('.')[0], operation: target.split('.')[1] ?? target, status };
  }
  const path = (req.url ?? '/').split('?')[0];
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const action = query.get('Action') ?? (body.length > 0 ? new URLSearchParams(body.toString()).get('Action') : null);
  return {
    service: serviceOf(req) ?? 'unknown',
    operation: action ?? `${req.method} ${decodeURIComponent(path)}`,
    status,
  };
}

/** The service a SigV4 signature names: `Credential=<key>/<date>/<region>/<service>/aws4_request`. */
function serviceOf(req: IncomingMessage): string | undefined {
  const scope = /Credential=[^/]+\/\d+\/[^/]+\/([^/]+)\//.exec(req.headers.authorization ?? '');
  const names: Record<string, string> = {
    dynamodb: 'DynamoDB',
    scheduler: 'Scheduler',
    sqs: 'SQS',
    s3: 'S3',
    sts: 'STS',
  };
  return scope === null ? undefined : (names[scope[1]] ?? scope[1]);
}

/** ConsumedCapacity of a DynamoDB answer: one object (Query, GetItem) or a list (BatchGetItem). */
function capacityOf(payload: Buffer): { capacityUnits?: number } {
  try {
    const consumed = (JSON.parse(payload.toString()) as { ConsumedCapacity?: unknown }).ConsumedCapacity;
    const list = (Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) as {
      CapacityUnits?: number;
    }[];
    if (list.length === 0) return {};
    return { capacityUnits: list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0) };
  } catch {
    return {};
  }
}

/** What a DynamoDB read would be billed, from the items it read (see the file's comment). */
async function modelledReadUnits(
  target: string,
  req: IncomingMessage,
  operation: string,
  body: Buffer,
  payload: Buffer,
): Promise<number | undefined> {
  let request: Record<string, unknown>;
  let answer: Record<string, unknown>;
  try {
    request = JSON.parse(body.toString()) as Record<string, unknown>;
    answer = JSON.parse(payload.toString()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (answer.__type !== undefined) return undefined; // an error answer
  if (operation === 'BatchGetItem') {
    // Item by item; each table's own ConsistentRead. Projections are not used by the console here: sized as answered.
    const tables = (request.RequestItems ?? {}) as Record<string, { ConsistentRead?: boolean }>;
    const responses = (answer.Responses ?? {}) as Record<string, WireItem[]>;
    return Object.entries(responses).reduce((sum, [table, items]) => {
      const factor = tables[table]?.ConsistentRead === true ? 1 : 0.5;
      return sum + items.reduce((s, item) => s + Math.max(1, Math.ceil(itemSize(item) / READ_UNIT_BYTES)) * factor, 0);
    }, 0);
  }
  const whole = isNarrowed(request) ? await readWhole(target, req, request) : answer;
  if (whole === undefined) return undefined;
  const factor = request.ConsistentRead === true ? 1 : 0.5;
  const items =
    operation === 'GetItem'
      ? whole.Item === undefined
        ? []
        : [whole.Item as WireItem]
      : ((whole.Items ?? []) as WireItem[]);
  const bytes = items.reduce((sum, item) => sum + itemSize(item), 0);
  // A read that finds nothing is still billed its minimum: one unit (half, eventually consistent).
  return Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES)) * factor;
}

function isNarrowed(request: Record<string, unknown>): boolean {
  return (
    request.ProjectionExpression !== undefined || request.FilterExpression !== undefined || request.Select !== undefined
  );
}

/**
 * The same read without its projection and filter, straight to moto: the whole items it read (Limit counts the items
 * read before a filter, so the same Limit and start key read the same items).
 */
async function readWhole(
  target: string,
  req: IncomingMessage,
  request: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const { ProjectionExpression: _p, FilterExpression: _f, Select: _s, ...rest } = request;
  const kept = [rest.KeyConditionExpression, rest.ConditionExpression].filter((e) => typeof e === 'string').join(' ');
  const used = (map: unknown) =>
    map === undefined
      ? undefined
      : Object.fromEntries(Object.entries(map as Record<string, unknown>).filter(([k]) => kept.includes(k)));
  const names = used(rest.ExpressionAttributeNames);
  const values = used(rest.ExpressionAttributeValues);
  const shadow = {
    ...rest,
    ExpressionAttributeNames: names && Object.keys(names).length > 0 ? names : undefined,
    ExpressionAttributeValues: values && Object.keys(values).length > 0 ? values : undefined,
  };
  const response = await fetch(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': String(req.headers['x-amz-target']),
      authorization: String(req.headers.authorization ?? ''),
    },
    body: JSON.stringify(shadow),
  });
  if (!response.ok) return undefined;
  return (await response.json()) as Record<string, unknown>;
}
