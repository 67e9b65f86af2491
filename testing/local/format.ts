/**
 * A local run as text: the occurrences as a table with why each is what it is, then what each function did, what the
 * run left out, and the verdict: whether every occurrence ended as its job's policies dictate.
 */
import Table from 'cli-table3';
import type { LocalRun, LocalRunRow } from './run-locally';

/**
 * A local run as text to print: the occurrences as a table (status, why, attempts, report key), what each function
 * did, and the verdict line.
 *
 * @example
 * ```ts
 * const run = await runLocally({ assemblyDir: 'cdk.out' });
 * console.log(formatLocalRun(run));
 * process.exitCode = run.ok ? 0 : 1;
 * ```
 */
export function formatLocalRun(run: LocalRun): string {
  const table = new Table({
    head: ['job', 'scheduled time', 'status', 'why', 'attempts', 'run', 'report key'],
    style: { head: [], border: [] }, // plain text: the output is often piped or pasted
    wordWrap: true,
    colWidths: [null, null, null, 42, null, null, null] as unknown as number[],
  });
  for (const r of run.rows) {
    table.push([
      r.scheduleKey === undefined ? r.jobId : `${r.jobId}/${r.scheduleKey}`,
      r.scheduledTime,
      r.expected ? r.status : `${r.status} (!)`,
      r.why,
      r.attempt === undefined ? '' : String(r.attempt),
      r.runMs === undefined ? '' : `${(r.runMs / 1000).toFixed(2)} s`,
      r.reportKey ?? '',
    ]);
  }
  const lines = [table.toString()];
  for (const f of run.fires) {
    if (f.outcome.startsWith('trigger failed'))
      lines.push(
        `  ${f.jobId}${f.scheduleKey === undefined ? '' : `/${f.scheduleKey}`} ${f.scheduledTime}: ${f.outcome}`,
      );
  }
  lines.push('');
  for (const f of run.functions)
    lines.push(`${f.label}: ${f.invocations} invocation(s), ${f.requests} DynamoDB and S3 request(s)`);
  const dead = Object.entries(run.deadLetters).filter(([, n]) => n > 0);
  for (const [worker, n] of dead) lines.push(`worker ${worker}: ${n} message(s) in its dead-letter queue`);
  lines.push(`announcements on the report topic's queue: ${run.announcements.length}`);
  for (const skipped of run.notRun) lines.push(`not run: ${skipped.logicalId}, ${skipped.why}`);
  lines.push('', verdictLine(run));
  return lines.join('\n');
}

/** `6 occurrence(s) ended as their jobs' policies dictate (4 SUCCEEDED, 2 SKIPPED) in 12.3 s`, or what did not. */
function verdictLine(run: LocalRun): string {
  const tally = countStatuses(run.rows);
  const seconds = `${(run.settleMs / 1000).toFixed(1)} s`;
  if (run.ok) return `${run.rows.length} occurrence(s) ended as their jobs' policies dictate (${tally}) in ${seconds}`;
  const unexpected = run.rows.filter((r) => !r.expected).length;
  const failedFires = run.fires.filter((f) => f.outcome.startsWith('trigger failed')).length;
  const problems = [
    unexpected > 0 ? `${unexpected} of ${run.rows.length} occurrence(s) did not end as their policy dictates (!)` : '',
    failedFires > 0 ? `${failedFires} trigger invocation(s) failed` : '',
    run.timedOut ? `the run timed out after ${seconds}` : '',
  ].filter(Boolean);
  return `${problems.join('; ')} (${tally}); see the functions' logs`;
}

function countStatuses(rows: readonly LocalRunRow[]): string {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
}
