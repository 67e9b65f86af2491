/**
 * Runs the claim-protocol simulation over many generated fault plans and prints a summary; exits 1 with the seed,
 * the shrunk plan and its trace when an invariant breaks.
 *
 *   npm run sim -- [--runs 1000] [--seed <int>] [--protocol ours|ours-original-timing|original|broken-...]
 *                  [--world all|classic|policies|cancel]
 *
 * `classic`: one occurrence per run (sim/world.ts); `policies`: several occurrences of one job under an overlap
 * policy (sim/policy-world.ts, our protocol only); `all` (the default, with --protocol ours): both, `--runs` each;
 * `cancel`: the policy world with the operator's cancels in every run (cancelPlan), where the cancel races most.
 */
import { parseArgs } from 'node:util';
import { cancelPlan, formatPolicyReport, simulatePolicies } from '../sim/policy-world';
import { formatReport, simulateMany } from '../sim/simulate';
import { VARIANTS } from '../sim/variants';

const USAGE = `usage: npm run sim -- [--runs 1000] [--seed <int>] [--protocol ${Object.keys(VARIANTS).join('|')}] [--world all|classic|policies|cancel]`;
const WORLDS = ['all', 'classic', 'policies', 'cancel'];

function usageError(message: string): never {
  console.error(`sim: ${message}`);
  console.error(USAGE);
  process.exit(2);
}

function parseOptions() {
  try {
    return parseArgs({
      options: {
        runs: { type: 'string', default: '1000' },
        seed: { type: 'string' },
        protocol: { type: 'string', default: 'ours' },
        world: { type: 'string', default: 'all' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    usageError((error as Error).message);
  }
}

function parse() {
  const values = parseOptions();
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const runs = Number(values.runs);
  if (!/^\d+$/.test(values.runs) || !Number.isSafeInteger(runs) || runs < 1) {
    usageError(`--runs must be a positive whole number, got ${JSON.stringify(values.runs)}`);
  }
  let seed = Math.floor(Math.random() * 2 ** 31);
  if (values.seed !== undefined) {
    seed = Number(values.seed);
    if (!/^-?\d+$/.test(values.seed) || !Number.isSafeInteger(seed) || Math.abs(seed) >= 2 ** 31) {
      usageError(
        `--seed must be a whole number between -2147483647 and 2147483647, got ${JSON.stringify(values.seed)}`,
      );
    }
  }
  const variant = VARIANTS[values.protocol];
  if (variant === undefined)
    usageError(`--protocol must be one of ${Object.keys(VARIANTS).join(', ')}, got ${JSON.stringify(values.protocol)}`);
  if (!WORLDS.includes(values.world))
    usageError(`--world must be one of ${WORLDS.join(', ')}, got ${JSON.stringify(values.world)}`);
  // The policy world runs our protocol: the other variants are the single occurrence's.
  const world = values.protocol === 'ours' ? values.world : 'classic';
  return { runs, seed, variant, protocol: values.protocol, world };
}

async function main(): Promise<void> {
  const { runs, seed, variant, protocol, world } = parse();
  const step = Math.max(100, Math.round(runs / 10));
  const replay = `npm run sim -- --runs ${runs} --seed ${seed} --protocol ${protocol} --world ${world}`;
  if (world !== 'policies' && world !== 'cancel') await classic(runs, seed, variant, step, replay);
  if (world === 'classic') return;
  console.error(`simulating ${runs} ${world === 'cancel' ? 'cancel' : 'policy'} plans with seed ${seed}…`);
  const policies = await simulatePolicies({
    runs,
    seed,
    ...(world === 'cancel' ? { plans: cancelPlan } : {}),
    onRun: (done) => {
      if (done % step === 0 && done < runs) console.error(`  ${done} runs`);
    },
  });
  console.log(formatPolicyReport(policies));
  if (policies.failure) {
    console.error(`\nFAILED: seed ${seed}. Replay with: ${replay}`);
    process.exit(1);
  }
}

async function classic(
  runs: number,
  seed: number,
  variant: (typeof VARIANTS)[string],
  step: number,
  replay: string,
): Promise<void> {
  console.error(`simulating ${runs} fault plans with seed ${seed} (${variant.name})…`);
  const report = await simulateMany({
    runs,
    seed,
    variant,
    onRun: (done) => {
      if (done % step === 0 && done < runs) console.error(`  ${done} runs`);
    },
  });
  console.log(formatReport(report));
  if (report.failure) {
    console.error(`\nFAILED: seed ${seed}. Replay with: ${replay}`);
    process.exit(1);
  }
}

void main();
