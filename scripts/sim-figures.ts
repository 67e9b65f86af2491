/**
 * Prints the original design's commentary's timing figures next to the same figures measured by simulation, for the original design's
 * worker, ours at its defaults and ours at the original lease timing (sim/figures.ts), as a Markdown table.
 *
 *   npm run sim:figures
 */
import { type DesignFigures, measureDesign, REQUEST_JOB_MS } from '../sim/figures';
import { ORIGINAL, OURS, OURS_AT_ORIGINAL_TIMING } from '../sim/variants';

const USAGE = 'usage: npm run sim:figures   (takes no arguments)';

const s = (x: number) => `${x.toFixed(1)} s`;

function stopped(f: DesignFigures): string {
  const when = f.lossToAbortS < 0 ? `${s(-f.lossToAbortS)} before it expires` : `${s(f.lossToAbortS)} after it expired`;
  if (f.stoppedBy === 'aborting job') return `aborted ${when}`;
  if (f.stoppedBy.startsWith('lease lost before complete')) return `at Complete, ${when}`;
  return `${f.stoppedBy}, ${when}`;
}

async function main(): Promise<void> {
  if (process.argv.length > 2) {
    console.error(`sim:figures: unexpected argument ${JSON.stringify(process.argv[2])}`);
    console.error(USAGE);
    process.exit(2);
  }
  const started = performance.now();
  const designs = [
    await measureDesign('original design (simulated)', ORIGINAL),
    await measureDesign('ours (defaults: lease 120 s, heartbeat 40 s, margin 15 s)', OURS),
    await measureDesign('ours at the original lease (120 s, heartbeat 45 s, margin 15 s)', OURS_AT_ORIGINAL_TIMING),
  ];
  const rows: [string, string, (f: DesignFigures) => string][] = [
    ['consecutive failed heartbeat ticks survived', '1 (two in a row lose it)', (f) => String(f.failedTicksSurvived)],
    ['lease lost → job stopped (one failed tick too many)', 'at `Complete`', stopped],
    [
      'two workers both believe they hold the occurrence',
      '15 s late plus the rest of the job',
      (f) => s(f.twoHoldersS),
    ],
    ['one-hour dependency outage: wake-ups', 'about 56', (f) => String(f.outage.wakeUps)],
    ['… time to the first retry', '2 s (`1 << 1`)', (f) => s(f.outage.firstRetryS)],
    ['… recovered after the outage ends', '—', (f) => s(f.outage.recoveryS)],
    [
      `AWS requests per occurrence, happy path (${REQUEST_JOB_MS / 1000} s job)`,
      '—',
      (f) => String(f.requestsHappyPath),
    ],
    ['AWS requests per retry', '—', (f) => String(f.requestsPerRetry)],
  ];
  const header = ['figure', 'original design (commentary)', ...designs.map((d) => d.design)];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
  for (const [name, claim, value] of rows) console.log(`| ${[name, claim, ...designs.map(value)].join(' | ')} |`);
  console.error(`measured in ${((performance.now() - started) / 1000).toFixed(1)} s of simulation`);
}

void main();
