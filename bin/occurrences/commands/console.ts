/**
 * `occurrences console`: serve the browser console (console/server/) on 127.0.0.1 against the target the global
 * options name, as every other command does. It prints one line, `Console: http://127.0.0.1:<port>/?token=<token>`
 * (then `read-only` when so), serves until Ctrl-C or SIGTERM, and prints one JSON audit line per action on stdout.
 * The token signs in once. `--open` hands the browser a private file that redirects to that address, never the
 * address itself: a command line is visible to every local user (`ps`), a file made 0600 in a 0700 folder is not.
 *
 * What it hands the server: the deployed jobs and the job-state rows, the pages' reads of the occurrence table
 * (metered: each answer carries its read units), the occurrence store and the worker queues the actions write
 * with (not needed with --read-only), the schedule switch, the report bucket when known, the schedule registry when
 * `--registry-table` or the stack's output names it, and the operator's identity from STS GetCallerIdentity, which
 * every action is recorded as: `<os user> via console (<caller ARN>)`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  type ConsoleDeps,
  type ConsoleOccurrenceReads,
  DEFAULT_CONSOLE_PORT,
  PortInUseError,
  ReadMeter,
  type ReportReader,
  startConsole,
  TIMELINE_ATTRIBUTES,
} from '../../../console/server';
import { asDependencyError } from '../../../functions/aws/classify-error';
import { messageOf } from '../../../functions/protocol/errors';
import { consoleOperatorName, resolveOperatorIdentity, stsCallerArn } from '../../../operations/operator-identity';
import type { ScheduleOperations } from '../../../operations/schedules';
import { parseArguments, wholeNumberArgument } from '../arguments';
import type { CliDeps, CommandSetup } from '../context';
import { UsageError } from '../errors';
import { readLocalTarget } from '../local-target';
import { type ClientConfig, catalogueOf, type Target } from '../target';
import { resolveScheduleTarget } from './schedules-target';

/** What the console command takes from the program's dependencies beyond CliDeps: tests pass their own. */
export interface ConsoleCliDeps {
  /** Opens the URL in a browser; rejects when it cannot. */
  readonly openBrowser?: (url: string) => Promise<void>;
  /** The page, instead of bundling console/web (tests that need no page). */
  readonly page?: { readonly script: string; readonly style: string };
}

export function registerConsole(program: Command, setup: CommandSetup): void {
  const deps = setup.deps as CliDeps & ConsoleCliDeps;
  program
    .command('console')
    .description('serve the browser console on 127.0.0.1: jobs, timelines, occurrences, and the actions')
    .option('--port <n>', 'the port on 127.0.0.1, 0-65535; 0 picks a free one', String(DEFAULT_CONSOLE_PORT))
    .option('--read-only', 'show everything, refuse every action (the page shows none)')
    .option('--open', 'open the console in the default browser')
    .option(
      '--registry-table <name>',
      'the schedule registry table (instead of the stack output ScheduleRegistryTableName)',
    )
    .action(async (raw, cmd: Command) => {
      const o = parseArguments(
        z.object({
          port: wholeNumberArgument(0, 65_535),
          readOnly: z.boolean().default(false),
          open: z.boolean().default(false),
          registryTable: z.string().min(1).optional(),
        }),
        raw,
      );
      const target = await setup.connect(cmd, { jobs: true, queues: !o.readOnly, bucket: true });
      const config = target.clientConfig ?? {};
      const registry = await registryOf(cmd, deps, target, o.registryTable);
      // The one resolver every operator write uses; the console asks STS even where the CLI's deps do not say how.
      const identity = await resolveOperatorIdentity({
        env: deps.env,
        callerArn: () => (deps.callerArn ?? stsCallerArn)(config),
        warn: deps.io.err,
      });
      const consoleDeps = consoleDepsOf(deps, target, { registry, operator: consoleOperatorName(identity), config });
      let running: Awaited<ReturnType<typeof startConsole>>;
      try {
        running = await startConsole(consoleDeps, {
          port: o.port,
          readOnly: o.readOnly,
          ...(deps.page === undefined ? {} : { page: deps.page }),
        });
      } catch (error) {
        if (error instanceof PortInUseError)
          throw new UsageError(`--port: ${error.message}; pass another --port, or --port 0 for a free one`);
        throw error;
      }
      deps.io.out(`Console: ${running.url}`);
      if (o.readOnly) deps.io.out('read-only');
      const signIn = o.open ? signInFile(running.url) : undefined;
      try {
        if (signIn !== undefined) {
          await (deps.openBrowser ?? openBrowser)(signIn.url).catch((error: unknown) =>
            deps.io.err(`warning: could not open a browser (${messageOf(error)}); open the URL above`),
          );
        }
        await untilStopped(deps.signal);
      } finally {
        signIn?.remove();
        await running.close();
      }
    });
}

/** The server's ports, from the target. */
function consoleDepsOf(
  deps: CliDeps,
  target: Target,
  extra: { registry?: ScheduleOperations; operator: string; config: ClientConfig },
): ConsoleDeps {
  // Against the emulator the units are estimated from item sizes: moto answers ConsumedCapacity with constants.
  const meter = new ReadMeter(extra.config.endpoint === undefined ? 'reported' : 'estimated');
  if (target.documents !== undefined) meter.attach(target.documents);
  // The CLI's own reads: a projected Query of one series (no checkpoints over the wire), a consistent GetItem.
  const occurrences: ConsoleOccurrenceReads = {
    newestFirst: (series, range) => target.reader.listSeriesNewestFirst(series, range, TIMELINE_ATTRIBUTES),
    get: async (key) => (await target.store.get(key)) as unknown as Record<string, unknown> | undefined,
  };
  return {
    where: target.where,
    operator: extra.operator,
    clock: deps.clock,
    jobs: catalogueOf(target),
    states: target.states,
    occurrences,
    // The attention view's reads of the status index: a Query per shard, whatever the number of jobs.
    index: target.reader,
    store: target.store,
    ...(target.queues === undefined ? {} : { queues: target.queues.byWorker }),
    ...(target.schedules === undefined ? {} : { schedules: target.schedules }),
    ...(extra.registry === undefined ? {} : { registry: extra.registry }),
    ...(target.bucketName === undefined ? {} : { reports: s3Reports(extra.config, target.bucketName) }),
    meter,
    audit: (line) => deps.io.out(JSON.stringify(line)),
  };
}

/**
 * The schedule registry: from --registry-table, or the kept local run's file (--local), or else from the stack's output when the target came from a stack
 * (`--stack`, or no --table and no --local); absent otherwise, and absent when the stack has none (a stack without
 * run-time schedules).
 */
async function registryOf(
  cmd: Command,
  deps: CliDeps,
  target: Target,
  givenRegistryTable: string | undefined,
): Promise<ScheduleOperations | undefined> {
  const all = cmd.optsWithGlobals();
  // A kept local run's file names its registry (when a job of its stack takes schedules at run time).
  const registryTable =
    givenRegistryTable ?? (typeof all.local === 'string' ? readLocalTarget(all.local).registryTable : undefined);
  const stackGiven = cmd.getOptionValueSourceWithGlobals('stack') !== 'default';
  const fromStack = stackGiven || (all.table === undefined && all.local === undefined);
  if (registryTable === undefined && !fromStack) return undefined;
  const config = target.clientConfig ?? {};
  const options = {
    ...(stackGiven ? { stack: all.stack as string } : {}),
    ...(all.outputPrefix === undefined ? {} : { outputPrefix: all.outputPrefix as string }),
    ...(registryTable === undefined ? {} : { registryTable }),
    scheduleGroup: catalogueOf(target).group,
    occurrenceTable: target.tableName,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    ...(config.region === undefined ? {} : { region: config.region }),
  };
  try {
    return (await resolveScheduleTarget(options, deps.env)).ops;
  } catch (error) {
    // Named by the flag: its failure is the operator's to see. Looked up in the stack: a stack without run-time
    // schedules has no registry, and the console works without one.
    if (registryTable !== undefined) throw error;
    if (!(error instanceof UsageError)) deps.io.err(`warning: the schedule registry is unknown (${messageOf(error)})`);
    return undefined;
  }
}

/** The committed reports, read with S3 GetObject (streamed). */
function s3Reports(config: ClientConfig, bucket: string): ReportReader {
  const s3 = new S3Client({ ...config, forcePathStyle: config.endpoint !== undefined });
  return {
    async open(key) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (out.Body === undefined) return undefined;
        return {
          body: out.Body as NodeJS.ReadableStream as import('node:stream').Readable,
          ...(out.ContentType === undefined ? {} : { contentType: out.ContentType }),
          ...(out.ContentLength === undefined ? {} : { contentLength: out.ContentLength }),
        };
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
        throw asDependencyError(`read the report ${key} from bucket ${bucket}`, error);
      }
    },
  };
}

/**
 * A page that sends the browser on to `url` (the sign-in address), in a folder only this user may read (0700, the
 * file 0600): its file:// address, which carries no secret, is what goes on the opener's command line. The token
 * in it is spent by the first sign-in; the folder goes when the console stops.
 */
export function signInFile(url: string): { readonly url: string; remove(): void } {
  const folder = mkdtempSync(join(tmpdir(), 'occurrences-console-'));
  const file = join(folder, 'sign-in.html');
  const href = url.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  writeFileSync(
    file,
    `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
      `<meta http-equiv="refresh" content="0;url=${href}"><title>occurrences console</title>` +
      `<p><a href="${href}">Open the console</a></p>`,
    { mode: 0o600 },
  );
  return { url: pathToFileURL(file).href, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Opens the URL with the platform's opener (open, start, xdg-open); rejects when it cannot be run or fails. */
function openBrowser(url: string): Promise<void> {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.once('error', (error) => reject(new Error(`${command}: ${error.message}`)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
    child.unref();
  });
}

/** Until Ctrl-C (the CLI's signal) or SIGTERM. */
function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', stop, { once: true });
    process.once('SIGTERM', stop);
    // Without the CLI's signal (a program calling runCli without one), Ctrl-C stops it too.
    if (signal === undefined) process.once('SIGINT', stop);
  });
}
