/** `npm run local`: the app's jobs, end to end, on moto, from what `cdk synth` wrote to cdk.out. */
import { formatLocalRun, runLocally } from 'scheduled-jobs-stack/testing';

runLocally({ assemblyDir: 'cdk.out', count: 2 }).then((run) => {
  console.log(formatLocalRun(run));
  process.exitCode = run.ok ? 0 : 1;
});
