/**
 * `npm run local`: the app's jobs, end to end, on moto, from what `cdk synth` wrote to cdk.out; the per-customer job
 * with one customer's schedule, created as the app creates it (upsertSchedule) and fired as Scheduler would.
 */
import { formatLocalRun, runLocally } from 'scheduled-jobs-stack/testing';

runLocally({
  assemblyDir: 'cdk.out',
  count: 2,
  runtimeSchedules: [
    {
      jobId: 'customer-report',
      scheduleKey: 'customer-42',
      expression: 'cron(0 8 ? * MON *)',
      timeZone: 'Europe/Berlin',
      input: { customerName: 'Acme GmbH' },
    },
  ],
}).then((run) => {
  console.log(formatLocalRun(run));
  for (const row of run.rows.filter((r) => r.row?.scheduleKey !== undefined)) {
    console.log(`report ${row.reportKey}: ${row.report ?? ''}`.trim());
  }
  process.exitCode = run.ok ? 0 : 1;
});
