/**
 * A local run as text: the occurrences as a table, then what each function did and what the run left out.
 */
import Table from 'cli-table3';
import type { LocalRun } from './run-locally';

export function formatLocalRun(run: LocalRun): string {
  const table = new Table({
    head: ['job', 'scheduled time', 'worker', 'status', 'attempts', 'announced', 'run', 'report key'],
    style: { head: [], border: [] }, // plain text: the output is often piped or pasted
  });
  for (const r of run.rows) {
    table.push([
      r.jobId,
      r.scheduledTime,
      r.worker ?? '',
      r.status,
      r.attempt === undefined ? '' : String(r.attempt),
      r.announced ? 'yes' : 'no',
      r.runMs === undefined ? '' : `${(r.runMs / 1000).toFixed(2)} s`,
      r.reportKey ?? '',
    ]);
  }
  const lines = [table.toString()];
  for (const r of run.rows) {
    if (r.status !== 'SUCCEEDED' && r.lastError !== undefined)
      lines.push(`  ${r.jobId} ${r.scheduledTime}: ${r.lastError}`);
  }
  for (const f of run.fires) {
    if (f.outcome.startsWith('trigger failed')) lines.push(`  ${f.jobId} ${f.scheduledTime}: ${f.outcome}`);
  }
  lines.push('');
  for (const f of run.functions)
    lines.push(`${f.label}: ${f.invocations} invocation(s), ${f.requests} DynamoDB and S3 request(s)`);
  const dead = Object.entries(run.deadLetters).filter(([, n]) => n > 0);
  for (const [worker, n] of dead) lines.push(`worker ${worker}: ${n} message(s) in its dead-letter queue`);
  lines.push(`announcements on the report topic's queue: ${run.announcements.length}`);
  for (const skipped of run.notRun) lines.push(`not run: ${skipped.logicalId}, ${skipped.why}`);
  const succeeded = run.rows.filter((r) => r.status === 'SUCCEEDED').length;
  lines.push(
    '',
    run.ok
      ? `all ${run.rows.length} occurrence(s) SUCCEEDED in ${(run.settleMs / 1000).toFixed(1)} s`
      : `${run.rows.length - succeeded} of ${run.rows.length} occurrence(s) did not succeed${run.timedOut ? ' before the timeout' : ''}; see the functions' logs`,
  );
  return lines.join('\n');
}
