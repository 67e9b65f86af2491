/**
 * `--local [file]`: the target a kept local run wrote (`npm run local -- --keep`, or runLocally's command-line form
 * with `--keep`), so that one flag points the CLI at the emulator, its table, bucket, schedule group and worker
 * queues, and the schedule registry the `schedules` commands use. Flags given beside it win. The file is written by testing/local/keep.ts; its fields are checked here
 * because nothing of the CLI imports the testing entry point.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UsageError } from './errors';
import type { TargetOptions } from './target';

/** Where a kept local run writes its target, under the folder it was started in. */
export const LOCAL_RUN_FILE = '.local/local-run.json';

const localRunFile = z.object({
  endpoint: z.string().regex(/^https?:\/\/\S+$/),
  region: z.string().min(1),
  tableName: z.string().min(1),
  bucketName: z.string().min(1).optional(),
  scheduleGroupName: z.string().min(1).optional(),
  registryTableName: z.string().min(1).optional(),
  workerQueues: z.record(z.string(), z.string().regex(/^https?:\/\/\S+$/)),
});

export function readLocalTarget(file: string): TargetOptions {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(
      `--local: no kept local run at ${file}; start one with \`npm run local -- --keep\` (this repository) or runLocally's \`--keep\`, and leave it running`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--local: ${file} is not JSON; a kept local run writes it, do not edit it`);
  }
  const parsed = localRunFile.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join('.') || '(the file)').join(', ');
    throw new UsageError(`--local: ${file} lacks or has a wrong ${fields}; a kept local run writes it, do not edit it`);
  }
  const run = parsed.data;
  return {
    endpoint: run.endpoint,
    region: run.region,
    table: run.tableName,
    bucket: run.bucketName,
    scheduleGroup: run.scheduleGroupName,
    registryTable: run.registryTableName,
    workerQueues: new Map(Object.entries(run.workerQueues)),
  };
}
