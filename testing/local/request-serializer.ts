/**
 * A proxy in front of the emulator that forwards one request at a time, and answers it before the next goes out.
 *
 * moto checks a write's condition and applies the write in two steps without a lock, so two concurrent conditional
 * writes of one item can both succeed (testing/local/local-aws.ts, serializeEmulatorRequests, measured it), where
 * DynamoDB and S3 make each conditional write atomic. The local driver serializes its own SDK clients' requests;
 * a synthesized app's bundled handlers build theirs inside their bundles, out of reach, so here their DynamoDB and
 * S3 endpoints (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_S3) point at this proxy instead. Writes go one at a time;
 * reads go at once. Each function gets a port of its own, which counts its requests. 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Headers of one hop that are not forwarded (the body is forwarded whole, with its length). */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'expect', 'proxy-connection', 'upgrade']);

export class RequestSerializer {
  private tail: Promise<void> = Promise.resolve();
  private readonly servers = new Map<string, { server: Server; endpoint: string }>();
  /** Requests forwarded, by the name of the port they came in on. */
  readonly requests = new Map<string, number>();

  constructor(private readonly target: URL) {}

  /** The endpoint for `name`'s requests: a port of its own, opened on first use. */
  async endpointFor(name: string): Promise<string> {
    const open = this.servers.get(name);
    if (open !== undefined) return open.endpoint;
    const server = createServer((req, res) => this.enqueue(name, req, res));
    // The SDK keeps its sockets alive between requests; they must not hold stop() up.
    server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.servers.set(name, { server, endpoint });
    return endpoint;
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(
        ({ server }) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
    this.servers.clear();
  }

  private enqueue(name: string, req: IncomingMessage, res: ServerResponse): void {
    this.requests.set(name, (this.requests.get(name) ?? 0) + 1);
    const body = readAll(req);
    const send = async () => {
      try {
        await this.forward(req, await body, res);
      } catch (error) {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`request serializer: ${(error as Error).message}`);
      }
    };
    // Reads change nothing, so they need not wait their turn (the digest's 128 shard queries go at once).
    if (isRead(req)) void send();
    else this.tail = this.tail.then(send);
  }

  /** Sends the request to the emulator and answers with its whole response. */
  private async forward(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_HEADERS.has(k)));
    headers['content-length'] = String(body.length);
    const response = await new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>(
      (resolve, reject) => {
        const upstream = request(
          {
            host: this.target.hostname,
            port: this.target.port,
            method: req.method,
            path: req.url,
            headers,
          },
          (answer) => {
            readAll(answer).then(
              (data) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: data }),
              reject,
            );
          },
        );
        upstream.once('error', reject);
        upstream.end(body);
      },
    );
    const out = Object.fromEntries(Object.entries(response.headers).filter(([k]) => !HOP_HEADERS.has(k)));
    // A HEAD answer's length is the object's, not of the (empty) body.
    if (req.method !== 'HEAD') out['content-length'] = String(response.body.length);
    res.writeHead(response.status, out as Record<string, string | string[]>);
    res.end(req.method === 'HEAD' ? undefined : response.body);
  }
}

/** DynamoDB's reads (by X-Amz-Target) and S3's GET and HEAD. */
function isRead(req: IncomingMessage): boolean {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return READ_OPERATIONS.has(target.slice(target.indexOf('.') + 1));
  return req.method === 'GET' || req.method === 'HEAD';
}

const READ_OPERATIONS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'DescribeTable', 'DescribeTimeToLive']);

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}
