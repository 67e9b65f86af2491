/**
 * `occurrences`: the operator's command line for the scheduled-jobs stack (docs/cli.md). Run it with `npm run occurrences -- <command>`; bin/occurrences/bin.cjs is the package bin.
 *
 * This file only wires the real world in: stdout and stderr, the system clock, Ctrl-C and the progress bar. What the
 * commands work on (the table, the jobs, the worker queues) they learn from the deployed stack (occurrences/target.ts),
 * so the CLI serves any app that deploys a ScheduledJobs, not only this repository's sample stack.
 */

import { createInterface } from 'node:readline/promises';
import { Presets, SingleBar } from 'cli-progress';
import { systemClock } from '../functions/protocol/ports';
import { stsCallerArn } from '../operations/operator-identity';
import type { ProgressFactory } from './occurrences/context';
import { runCli } from './occurrences/program';

/** Below this many occurrences a backfill finishes before a bar would be worth drawing. */
const PROGRESS_BAR_FROM = 20;

const progressBar: ProgressFactory = (total, label = 'backfill') => {
  if (!process.stderr.isTTY || total < PROGRESS_BAR_FROM) return { increment: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {value}/{total} occurrences, {eta_formatted} left`,
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return { increment: () => bar.increment(), stop: () => bar.stop() };
};

/** A yes/no question on the terminal (a bulk action's confirmation): only `y` or `yes` is a yes. */
async function confirm(question: string): Promise<boolean> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(`${question} [y/N] `)).trim());
  } finally {
    terminal.close();
  }
}

async function main(): Promise<number> {
  // `occurrences list | head`: once the reader has closed the pipe, stop quietly, as Unix tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  // The first Ctrl-C stops `watch` and `backfill` cleanly (a backfill finishes the occurrences in flight and says
  // how far it got); a second one, or a command still running two seconds later, ends the process.
  const stop = new AbortController();
  process.once('SIGINT', () => {
    stop.abort();
    process.once('SIGINT', () => process.exit(130));
    setTimeout(() => process.exit(130), 2000).unref();
  });
  return runCli(process.argv.slice(2), {
    io: { out: (text) => process.stdout.write(`${text}\n`), err: (text) => process.stderr.write(`${text}\n`) },
    clock: systemClock,
    env: process.env,
    progress: progressBar,
    signal: stop.signal,
    callerArn: stsCallerArn,
    ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm } : {}),
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
