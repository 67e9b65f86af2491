/**
 * A kept local run, for the `occurrences` CLI: its resource names go to `.local/local-run.json` under the folder it
 * was started in, where `occurrences --local` reads them; it prints a few commands, waits for Ctrl-C (or SIGTERM),
 * then stops the emulator, the workers and the notifier and removes the file.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KeptLocalRun } from './run-locally';

/** The file `occurrences --local` reads by default (bin/occurrences/local-target.ts). */
export const LOCAL_RUN_FILE = path.join('.local', 'local-run.json');

/** `cli`: how the CLI is started where the user is (`npx occurrences`, or `npm run -s occurrences --` here). */
export function keptRunCommands(run: KeptLocalRun, cli: string): string[] {
  const job = run.rows.find((r) => r.scheduleKey === undefined)?.jobId ?? run.rows[0]?.jobId ?? '<job>';
  // A job that takes schedules at run time: its schedules commands, and one of its keys run now.
  const keyed = run.rows.find((r) => r.scheduleKey !== undefined);
  const perKey =
    keyed === undefined
      ? []
      : [
          `schedules list ${keyed.jobId}`,
          `schedules upsert ${keyed.jobId} another-key --expression "rate(1 day)" --input '{"note":"local"}'`,
          `run ${keyed.jobId} --key ${keyed.scheduleKey}`,
        ];
  return ['list', `describe ${job}`, `run ${job}`, `pause ${job} --note "why"`, `resume ${job}`, ...perKey].map(
    (command) => `${cli} --local ${LOCAL_RUN_FILE} ${command}`,
  );
}

export function writeLocalRunFile(run: KeptLocalRun, file = LOCAL_RUN_FILE): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(run.resources, null, 2)}\n`);
}

/** Writes the file, prints how to reach the run, and resolves with the run's exit code once Ctrl-C has stopped it. */
export function waitForCtrlC(run: KeptLocalRun, cli: string, print: (line: string) => void): Promise<number> {
  writeLocalRunFile(run);
  print(`\nmoto, the resources and the workers keep running at ${run.resources.endpoint}; their names are in`);
  print(`${LOCAL_RUN_FILE}, where the occurrences CLI's --local finds them. In another terminal:`);
  for (const line of keptRunCommands(run, cli)) print(`  ${line}`);
  if (run.resources.registryTableName !== undefined)
    print('A run-time schedule upserted now is fired as soon as the run sees it (within a second).');
  print('Press Ctrl-C to stop.');
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      rmSync(LOCAL_RUN_FILE, { force: true });
      run.stop().then(
        () => resolve(run.ok ? 0 : 1),
        () => resolve(1),
      );
    };
    // Before moto-server.ts's own handler, which kills the emulator it started and exits at once.
    process.prependListener('SIGINT', stop);
    process.prependListener('SIGTERM', stop);
  });
}
