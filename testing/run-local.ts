/**
 * Runs a synthesized app's jobs on this machine against moto and prints the occurrences: the command-line form of
 * runLocally, without a bin entry.
 *
 *   npx cdk synth --quiet
 *   node node_modules/<package>/dist/testing/run-local.js --count 2
 *
 * Options: --assembly <dir> (cdk.out), --stack <name>, --from <ISO time> (now), --count <n> (1), --jobs <a,b>,
 * --timeout <seconds> (120), --endpoint <url> (a running moto_server; default: one is started), --logs <file> (the
 * functions' log lines, JSON; default: not written), --fire in-turn|at-once (in-turn), --keep (leave everything running
 * and print the occurrences CLI for it, until Ctrl-C). Exit code 0 when every occurrence ended as its job's policies
 * dictate, 1 when not, 2 for a usage error.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AssemblyError } from './errors';
import { formatLocalRun } from './local/format';
import { waitForCtrlC } from './local/keep';
import { MotoUnavailableError } from './local/moto-server';
import { type KeptLocalRun, type RunLocallyOptions, runLocally } from './local/run-locally';

/** What `--help` prints. */
export const RUN_LOCAL_HELP = `Usage: node node_modules/scheduled-jobs-stack/dist/testing/run-local.js [options]

Runs a synthesized app's jobs on this machine against moto (runLocally), after \`npx cdk synth --quiet\`, and
prints each occurrence with why it ended as it did.

Options:
  --assembly <dir>     the cloud assembly (default: cdk.out)
  --stack <name>       the stack to run (default: the assembly's only stack with schedules)
  --from <time>        fire the occurrences due at or after this ISO date-time (default: now)
  --count <n>          occurrences per schedule, 1-50 (default: 1)
  --jobs <a,b>         comma-separated job ids (default: every enabled schedule)
  --fire <mode>        in-turn (default) or at-once
  --timeout <seconds>  give up waiting for the occurrences after this long (default: 120)
  --endpoint <url>     a running moto_server (default: one is started)
  --logs <file>        write the functions' log lines there, as JSON (default: not written)
  --keep               leave everything running and print the occurrences CLI for it, until Ctrl-C; run-time
                       schedules upserted meanwhile (npx occurrences --local .local/local-run.json schedules upsert …)
                       are fired as they appear
  --help               this text

Exit code: 0 when every occurrence ended as its job's policies dictate, 1 when not, 2 for a usage error.`;

export async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(RUN_LOCAL_HELP);
    return 0;
  }
  let options: RunLocallyOptions;
  let logFile: string | undefined;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        assembly: { type: 'string' },
        stack: { type: 'string' },
        from: { type: 'string' },
        count: { type: 'string' },
        jobs: { type: 'string' },
        timeout: { type: 'string' },
        endpoint: { type: 'string' },
        logs: { type: 'string' },
        fire: { type: 'string' },
        keep: { type: 'boolean' },
      },
      strict: true,
    });
    logFile = values.logs;
    options = {
      assemblyDir: values.assembly,
      stackName: values.stack,
      from: values.from,
      count: values.count === undefined ? undefined : Number(values.count),
      jobs: values.jobs
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      timeoutSeconds: values.timeout === undefined ? undefined : Number(values.timeout),
      endpoint: values.endpoint,
      fire: values.fire as RunLocallyOptions['fire'],
      keep: values.keep,
    };
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    return 2;
  }
  try {
    const run = await runLocally(options);
    console.log(formatLocalRun(run));
    if (logFile !== undefined) {
      writeFileSync(logFile, run.logs.map((l) => JSON.stringify(l)).join('\n'));
      console.log(`the functions' log lines: ${logFile}`);
    }
    if (options.keep === true) return waitForCtrlC(run as KeptLocalRun, 'npx occurrences', console.log);
    return run.ok ? 0 : 1;
  } catch (error) {
    if (error instanceof TypeError || error instanceof AssemblyError || error instanceof MotoUnavailableError) {
      console.error(`error: ${error.message}`);
      return error instanceof TypeError ? 2 : 1;
    }
    throw error;
  }
}

if (require.main === module) {
  // As the occurrences bin does: the SDK's notice that its 2027 releases need Node 22 would head every local run on
  // Node 20 (the clients are made inside the run, after this line); the package's Node range is stated in the README.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
