/**
 * The options the generated-plan simulations share (`sim:registry`, `sim:keyed`): how many runs, which seed (a random
 * one when none is given, printed so that a failure can be replayed), an optional wall-clock limit, and progress lines
 * on stderr every tenth of the runs. Each is checked, and a bad one names its flag.
 */
export interface SimRunOptions {
  readonly runs: number;
  readonly seed: number;
  /** Stop after this long with the runs done so far (fast-check's interruptAfterTimeLimit). */
  readonly timeLimitMs?: number;
  /** Prints `  N runs` every tenth of the runs. */
  readonly onRun: (done: number) => void;
}

export function simRunOptions(values: { runs?: string; seed?: string; minutes?: string }): SimRunOptions {
  const runs = Number(values.runs);
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive whole number, got ${values.runs}`);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be a whole number, got ${values.seed}`);
  const minutes = values.minutes === undefined ? undefined : Number(values.minutes);
  if (minutes !== undefined && !(minutes > 0))
    throw new Error(`--minutes must be a positive number, got ${values.minutes}`);
  const step = Math.max(100, Math.round(runs / 10));
  return {
    runs,
    seed,
    ...(minutes === undefined ? {} : { timeLimitMs: minutes * 60_000 }),
    onRun: (done) => {
      if (done % step === 0 && done < runs) console.error(`  ${done} runs`);
    },
  };
}
