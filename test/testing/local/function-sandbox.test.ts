import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { currentFunction, FunctionSandbox } from '../../../testing/local/function-sandbox';

const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = () => undefined;
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Class: FunctionSandbox', () => {
  let sandbox: FunctionSandbox | undefined;
  afterEach(() => {
    sandbox?.close();
    sandbox = undefined;
  });

  it('gives each function its own environment, also after awaits while others run', async () => {
    sandbox = FunctionSandbox.open();
    const s = sandbox;
    const read = (name: string, delay: number) =>
      s.run(name, { QUEUE_URL: `${name}-queue`, HOME: undefined }, quiet, async () => {
        await tick(delay);
        return {
          queue: process.env.QUEUE_URL,
          home: 'HOME' in process.env,
          keys: Object.keys(process.env),
          fn: currentFunction(),
        };
      });
    const [a, b] = await Promise.all([read('a', 20), read('b', 5)]);
    expect(a).toMatchObject({ queue: 'a-queue', home: false, fn: 'a' });
    expect(b).toMatchObject({ queue: 'b-queue', home: false, fn: 'b' });
    expect(a.keys).toContain('QUEUE_URL');
    expect(a.keys).not.toContain('HOME');
    expect(a.keys).toContain('PATH'); // the process's own variables show through
    expect(process.env.QUEUE_URL).toBeUndefined();
    expect(process.env.HOME).toBeDefined();
  });

  it("keeps a function's writes to its environment to itself", async () => {
    sandbox = FunctionSandbox.open();
    await sandbox.run('a', {}, quiet, async () => {
      process.env.CACHED = 'yes';
      delete process.env.PATH;
      await tick(1);
      expect(process.env.CACHED).toBe('yes');
      expect(process.env.PATH).toBeUndefined();
    });
    expect(process.env.CACHED).toBeUndefined();
    expect(process.env.PATH).toBeDefined();
  });

  it('sends what a function writes to stdout and stderr to its own sink, and the rest where it went', async () => {
    sandbox = FunctionSandbox.open();
    const out: string[] = [];
    await sandbox.run(
      'a',
      {},
      (text, stream) => out.push(`${stream}:${text}`),
      async () => {
        process.stdout.write('{"level":"INFO"}\n');
        await tick(1);
        process.stderr.write(Buffer.from('oops\n'));
      },
    );
    expect(out).toEqual(['stdout:{"level":"INFO"}\n', 'stderr:oops\n']);
  });

  it('loads a fresh module instance per call, its top level seeing the function environment', () => {
    const file = path.join(dir, 'bundle.js');
    writeFileSync(
      file,
      'let calls = 0; const table = process.env.TABLE; exports.handler = () => ({ table, calls: ++calls, env: process.env.TABLE });',
    );
    sandbox = FunctionSandbox.open();
    const one = sandbox.load('one', { TABLE: 't1' }, quiet, file);
    const two = sandbox.load('two', { TABLE: 't2' }, quiet, file);
    const call = (m: Record<string, unknown>) => (m.handler as () => unknown)();
    expect(call(one)).toEqual({ table: 't1', calls: 1, env: undefined }); // called outside any function
    expect(call(one)).toMatchObject({ calls: 2 });
    expect(sandbox.run('two', { TABLE: 't2' }, quiet, () => call(two))).toEqual({ table: 't2', calls: 1, env: 't2' });
    expect(require.cache[file]).toBeUndefined();
  });

  it('restores process.env and the streams when the last open sandbox closes', () => {
    const env = process.env;
    const write = process.stdout.write;
    const log = console.log;
    const first = FunctionSandbox.open();
    const second = FunctionSandbox.open();
    expect(process.env).not.toBe(env);
    first.close();
    first.close(); // twice is once
    expect(process.env).not.toBe(env);
    second.close();
    expect(process.env).toBe(env);
    expect(process.stdout.write).toBe(write);
    expect(console.log).toBe(log);
  });
});
