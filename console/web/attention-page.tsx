/**
 * The attention view (`#/attention`): what needs an operator across every job in the last day, most urgent first
 * (FAILED, late, RUNNING, BUFFERED, as the server orders them: console/server/attention.ts), each one click from its
 * occurrence; then the counts by status per job. Read through the status index: its cost does not grow with jobs.
 */
import { useEffect, useState } from 'preact/hooks';
import type { AttentionItem, AttentionView, Status } from '../contract';
import { api, errorText } from './api';
import { formatCount, formatDuration, formatUtc } from './format';
import { occurrenceHash, timelineHash } from './route';
import { ErrorNote, FoldedError, StatusBadge } from './widgets';

/** The window the view covers, back from now. */
export const ATTENTION_WINDOW_MS = 24 * 60 * 60 * 1000;

const COUNTED: readonly Status[] = ['FAILED', 'RUNNING', 'PENDING', 'RETRY_WAIT', 'BUFFERED'];

const KIND_LABEL: Record<AttentionItem['kind'], string> = {
  failed: 'Failed',
  late: 'Late',
  running: 'Running',
  buffered: 'Buffered',
};

export function AttentionPage(props: { readonly now: () => number }) {
  const [view, setView] = useState<AttentionView>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    const abort = new AbortController();
    const to = props.now();
    const range = { from: new Date(to - ATTENTION_WINDOW_MS).toISOString(), to: new Date(to + 1000).toISOString() };
    api.attention(range, abort.signal).then(
      (answer) => {
        setView(answer);
        setError(undefined);
      },
      (e: unknown) => !abort.signal.aborted && setError(errorText(e)),
    );
    return () => abort.abort();
  }, []);
  useEffect(() => {
    if (view !== undefined) document.body.dataset.ready = 'attention';
  }, [view]);
  return (
    <section aria-labelledby="attention-title">
      <div class="page-head">
        <div>
          <h1 id="attention-title">Needs attention</h1>
          {view && (
            <p class="sub">
              Scheduled from {formatUtc(view.from)} to {formatUtc(view.to)}, every job; {formatCount(view.readUnits)}{' '}
              read units
            </p>
          )}
        </div>
      </div>
      <ErrorNote error={error} />
      {view === undefined && error === undefined && <p class="muted">Loading…</p>}
      {view && view.items.length === 0 && <p data-test="all-clear">Nothing failed, late, running or buffered.</p>}
      {view && view.items.length > 0 && (
        <div class="table-wrap">
          <table class="attention">
            <thead>
              <tr>
                <th scope="col">What</th>
                <th scope="col">Occurrence</th>
                <th scope="col">Status</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {view.items.map((item) => (
                <tr key={`${item.jobId}\n${item.scheduleKey ?? ''}\n${item.scheduledTime}`} data-attention={item.kind}>
                  <td>{KIND_LABEL[item.kind]}</td>
                  <td>
                    <a href={occurrenceHash(item.jobId, item.scheduledTime, item.scheduleKey)}>
                      {item.scheduleKey === undefined ? item.jobId : `${item.jobId} · ${item.scheduleKey}`} at{' '}
                      {formatUtc(item.scheduledTime)}
                    </a>
                  </td>
                  <td>
                    <StatusBadge status={item.status} />
                  </td>
                  <td>{details(item)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {view.truncated && (
            <p class="notice">More need attention than are listed: the counts below cover them all.</p>
          )}
        </div>
      )}
      {view && view.jobs.length > 0 && (
        <div class="table-wrap">
          <table class="attention-counts" data-test="attention-counts">
            <thead>
              <tr>
                <th scope="col">Job</th>
                {COUNTED.map((s) => (
                  <th scope="col" class="num" key={s}>
                    {s}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {[{ jobId: 'All jobs', counts: view.total, total: true }, ...view.jobs].map((job) => (
                <tr key={`${job.jobId}\n${'scheduleKey' in job ? job.scheduleKey : ''}`}>
                  <th scope="row">
                    {'total' in job ? (
                      job.jobId
                    ) : (
                      <a href={timelineHash(job.jobId, 'scheduleKey' in job ? job.scheduleKey : undefined)}>
                        {job.jobId}
                      </a>
                    )}
                  </th>
                  {COUNTED.map((s) => (
                    <td class="num" key={s}>
                      {formatCount(job.counts[s] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function details(item: AttentionItem) {
  switch (item.kind) {
    case 'failed':
      return item.error === undefined ? '' : <FoldedError text={item.error} />;
    case 'late':
      return `not started, ${formatDuration(item.lateByMs ?? 0)} past its lateAfter`;
    case 'running': {
      const progress = item.progress;
      const share = progress?.total ? ` (${Math.round((progress.done / progress.total) * 100)} %)` : '';
      return [
        progress &&
          `${formatCount(progress.done)}${progress.total === undefined ? '' : ` of ${formatCount(progress.total)}`}${share}`,
        item.leaseAgeMs !== undefined && `claimed ${formatDuration(item.leaseAgeMs)} ago`,
        item.heartbeatAgeMs !== undefined && `last heartbeat ${formatDuration(item.heartbeatAgeMs)} ago`,
      ]
        .filter(Boolean)
        .join(', ');
    }
    case 'buffered':
      return 'waits for the run before it';
  }
}
