import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestSerializer } from '../../../testing/local/request-serializer';

/** A stand-in for the emulator: answers after 20 ms and records how many requests it had at once. */
let target: Server;
const inFlight = { writes: 0, reads: 0 };
const peak = { writes: 0, reads: 0 };
const seen: { method?: string; body: string; header?: string }[] = [];

beforeAll(async () => {
  target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const kind = String(req.headers['x-amz-target'] ?? '').endsWith('GetItem') ? 'reads' : 'writes';
      inFlight[kind] += 1;
      peak[kind] = Math.max(peak[kind], inFlight[kind]);
      seen.push({
        method: req.method,
        body: Buffer.concat(chunks).toString(),
        header: req.headers['x-test'] as string,
      });
      setTimeout(() => {
        inFlight[kind] -= 1;
        const body = JSON.stringify({ echoed: Buffer.concat(chunks).toString() });
        res.writeHead(req.method === 'HEAD' ? 200 : 201, {
          'content-type': 'application/json',
          'x-answer': 'yes',
          'content-length': req.method === 'HEAD' ? '1234' : String(Buffer.byteLength(body)),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      }, 20);
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', () => resolve()));
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

function send(endpoint: string, method: string, operation: string, body = '') {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const url = new URL(endpoint);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: '/',
        headers: { 'x-amz-target': `DynamoDB_20120810.${operation}`, 'x-test': 'kept' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

describe('Class: RequestSerializer', () => {
  it('forwards writes one at a time and reads at once, with method, headers, body and answer intact', async () => {
    const serializer = new RequestSerializer(new URL(`http://127.0.0.1:${(target.address() as AddressInfo).port}`));
    try {
      const worker = await serializer.endpointFor('worker');
      const trigger = await serializer.endpointFor('trigger');
      expect(await serializer.endpointFor('worker')).toBe(worker);
      const writes = Array.from({ length: 6 }, (_, i) => send(i % 2 ? worker : trigger, 'POST', 'UpdateItem', `w${i}`));
      const reads = Array.from({ length: 6 }, () => send(worker, 'POST', 'GetItem'));
      const answers = await Promise.all([...writes, ...reads]);
      expect(peak.writes).toBe(1);
      expect(peak.reads).toBeGreaterThan(1);
      expect(answers[0]).toMatchObject({ status: 201, body: '{"echoed":"w0"}', headers: { 'x-answer': 'yes' } });
      expect(seen.every((s) => s.header === 'kept' && s.method === 'POST')).toBe(true);
      expect(Object.fromEntries(serializer.requests)).toEqual({ worker: 9, trigger: 3 });

      const head = await send(worker, 'HEAD', 'HeadObject');
      expect(head.headers['content-length']).toBe('1234'); // the object's length, not the empty body's
    } finally {
      await serializer.stop();
    }
  });
});
