/**
 * The real CLI as a process, through the package bin (bin/occurrences/bin.cjs): exit codes and what reaches stdout
 * and stderr.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OccurrenceStatus } from '../../functions/protocol/occurrence';
import { workerLimits } from '../../functions/protocol/worker-limits';
import { createResources, type LocalResources, localClients } from '../../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../../testing/local/moto-server';
import { putRows, row } from './support';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'occurrences', 'bin.cjs');

function occurrences(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Nothing of the test runner's AWS settings: the endpoint comes from the arguments.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let moto: MotoServer;
let resources: LocalResources;

beforeAll(async () => {
  moto = await startMotoServer();
  const clients = localClients(moto.endpoint);
  resources = await createResources(clients, { limits: workerLimits([]) });
  const now = Date.now();
  await putRows(clients, resources.tableName, [
    row('occurrence-digest', '2026-11-29T05:00:00Z', OccurrenceStatus.SUCCEEDED, now, {
      reportKey: 'reports/occurrence-digest/2026-11-29T05:00:00Z.md',
    }),
    row('occurrence-digest', '2026-11-30T05:00:00Z', OccurrenceStatus.FAILED, now, { lastError: 'Error: boom' }),
  ]);
});
afterAll(async () => moto?.stop());

describe('the occurrences process', () => {
  it('exits 2 for a bad argument, with the message and the usage line on stderr and nothing on stdout', async () => {
    const result = await occurrences(['list', '--status', 'DONE']);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^error: --status: must be one or more of .* got "DONE"\nUsage: occurrences list \[options\]\n/,
    );
  });

  it('lists the occurrences of a job as a table on stdout and exits 0', async () => {
    const result = await occurrences([
      'list',
      '--job',
      'occurrence-digest',
      '--from',
      '2026-11-01',
      '--table',
      resources.tableName,
      '--endpoint',
      moto.endpoint,
    ]);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.findIndex((l) => l.includes('2026-11-30T05:00:00Z'))).toBeLessThan(
      lines.findIndex((l) => l.includes('2026-11-29T05:00:00Z')),
    );
    expect(result.stdout).toMatch(/occurrence-digest.*2026-11-30T05:00:00Z.*FAILED.*Error: boom/);
    expect(result.stdout).toContain(
      '2 occurrence(s), newest first (job occurrence-digest, any status, scheduled 2026-11-01T00:00:00Z onwards)',
    );
  });
});
