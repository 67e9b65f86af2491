/**
 * An HTTP proxy in front of moto that counts the AWS requests passing through it: the console runs in a process of
 * its own (bench/console-process.ts), so its SDK clients cannot take the request recorder's middleware
 * (request-recorder.ts); pointed at this proxy instead of moto, every request it makes is seen here, retries
 * included, as AWS would bill them. DynamoDB requests are named by their X-Amz-Target and their answers' ConsumedCapacity
 * is summed, to check the read units the console reports against what DynamoDB (moto) said.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request that went through the proxy. */
export interface ProxiedRequest {
  /** `DynamoDB`, `Scheduler`, `SQS`, `S3`, ... (from X-Amz-Target or the signature's credential scope). */
  readonly service: string;
  /** `Query`, `GetItem`, ...; for the REST services the method and path: `GET /schedules/x`. */
  readonly operation: string;
  readonly status: number;
  /** DynamoDB: the capacity units its answer reported (ConsumedCapacity), when it asked for them. */
  readonly capacityUnits?: number;
}

export class CountingProxy {
  readonly requests: ProxiedRequest[] = [];

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
            void readBody(answer).then((payload) => {
              proxy?.requests.push(describeRequest(req, body, answer.statusCode ?? 0, payload));
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
