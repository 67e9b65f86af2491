/**
 * One occurrence (`#/occurrence/<jobId>/<time>?key`): the row in full (known fields, attempts with their errors, the
 * raw JSON), lease, checkpoint, progress with rate and time left (from two successive readings), the report and the
 * notification, and who cancelled it and why. Polled every 2 s while the row is live. Actions: retry (where the server
 * says the library would reopen it: a FAILED row), cancel (a row not finished yet) and run now. Errors show their
 * first line and unfold.
 */
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ConsoleConfig, OccurrenceDetail } from '../contract';
import { CANCELLABLE } from './action-text';
import { ActionDialogs, useActionDialogs } from './actions';
import { ApiError, api, errorText } from './api';
import { formatBytes, formatCount, formatDuration, formatUtc } from './format';
import { attemptHistory, cancellation, knownFields, leaseState } from './occurrence-fields';
import { formatRate, type ProgressReading, progressRate, progressShare } from './progress-rate';
import { occurrenceHash, timelineHash } from './route';
import { ErrorNote, FoldedError, StatusBadge } from './widgets';

/** Fields that name another occurrence of the series: links to it. */
const LINKED = new Set(['yieldedTo', 'cancelledBy']);

/** How often a live row is read again. */
export const POLL_MS = 2000;

/** The occurrence page. */
export function OccurrencePage(props: {
  readonly config: ConsoleConfig;
  readonly jobId: string;
  readonly time: string;
  readonly scheduleKey?: string;
  readonly now: () => number;
}) {
  const { jobId, time, scheduleKey } = props;
  const [detail, setDetail] = useState<OccurrenceDetail>();
  const [error, setError] = useState<string>();
  const { open, setOpen, close, generation } = useActionDialogs();
  const [readings, setReadings] = useState<{ older?: ProgressReading; newer?: ProgressReading }>({});
  const [now, setNow] = useState(props.now());
  const lastAt = useRef<string | undefined>(undefined);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const abort = new AbortController();
    const read = () => {
      api.occurrence({ job: jobId, ...(scheduleKey ? { key: scheduleKey } : {}), time }, abort.signal).then(
        (answer) => {
          setDetail(answer);
          setError(undefined);
          setNow(props.now());
          const progress = answer.summary.progress;
          if (progress !== undefined && progress.at !== lastAt.current) {
            lastAt.current = progress.at;
            setReadings((r) => ({ older: r.newer, newer: progress }));
          }
          if (answer.live) timer = setTimeout(read, POLL_MS);
        },
        (e: unknown) => {
          if (abort.signal.aborted) return;
          setError(errorText(e));
          // A refusal (no such occurrence, a bad parameter, no session) stays one; a failure may pass.
          if (!(e instanceof ApiError && e.status < 500)) timer = setTimeout(read, POLL_MS * 2);
        },
      );
    };
    read();
    return () => {
      abort.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [jobId, time, scheduleKey, generation]);
  useEffect(() => {
    if (detail !== undefined) document.body.dataset.ready = 'occurrence';
  }, [detail]);

  const target = { jobId, ...(scheduleKey ? { scheduleKey } : {}) };
  const title = `${scheduleKey === undefined ? jobId : `${jobId} · ${scheduleKey}`} at ${formatUtc(time)}`;
  const summary = detail?.summary;
  const cancelled = detail === undefined ? undefined : cancellation(detail.row);
  return (
    <section aria-labelledby="occurrence-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/jobs">Jobs</a> <span aria-hidden="true">›</span>{' '}
        <a href={timelineHash(jobId, scheduleKey)}>{scheduleKey ?? jobId}</a> <span aria-hidden="true">›</span>{' '}
        <span>{formatUtc(time)}</span>
      </nav>
      <div class="page-head">
        <div>
          <h1 id="occurrence-title">{title}</h1>
          {summary && (
            <p class="sub">
              <StatusBadge status={summary.status} skipReason={summary.skipReason} />{' '}
              {detail?.live ? <span class="live">live: read again every 2 s</span> : null}
            </p>
          )}
          {cancelled && (
            <p class="cancelled" data-test="cancelled">
              {cancelled.by === undefined ? 'Cancelled' : <>Cancelled by {cancelled.by}</>}
              {cancelled.at && ` at ${formatUtc(cancelled.at)}`}
              {cancelled.note !== undefined && (
                <>
                  : <q data-test="cancel-note">{cancelled.note}</q>
                </>
              )}
              {cancelled.byOccurrence !== undefined && (
                <>
                  , by the occurrence of{' '}
                  <a href={occurrenceHash(jobId, cancelled.byOccurrence, scheduleKey)}>
                    {formatUtc(cancelled.byOccurrence)}
                  </a>{' '}
                  (overlap policy cancelOther)
                </>
              )}
            </p>
          )}
        </div>
        {!props.config.readOnly && summary && (
          <div class="head-side">
            {detail?.retry.offered && (
              <button
                type="button"
                data-action="retry"
                onClick={() => setOpen({ kind: 'retry', target, scheduledTime: time, status: summary.status })}
              >
                Retry
              </button>
            )}
            {CANCELLABLE.includes(summary.status) && (
              <button
                type="button"
                data-action="cancel"
                onClick={() => setOpen({ kind: 'cancel', target, scheduledTime: time, status: summary.status })}
              >
                Cancel
              </button>
            )}
            <button type="button" data-action="run" onClick={() => setOpen({ kind: 'run', target })}>
              Run now
            </button>
          </div>
        )}
      </div>
      <ErrorNote error={error} />
      {detail === undefined && error === undefined && <p class="muted">Loading…</p>}
      {detail && <Detail detail={detail} readings={readings} now={now} jobId={jobId} scheduleKey={scheduleKey} />}
      <ActionDialogs open={open} now={now} onClose={close} />
    </section>
  );
}

function Detail(props: {
  readonly detail: OccurrenceDetail;
  readonly readings: { older?: ProgressReading; newer?: ProgressReading };
  readonly now: number;
  readonly jobId: string;
  readonly scheduleKey?: string;
}) {
  const { detail, now, jobId, scheduleKey } = props;
  const { summary, row } = detail;
  const fields = knownFields({ ...row, segments: row.segments ?? summary.segments }, now);
  const attempts = attemptHistory(row);
  const lease = leaseState(row, now);
  const progress = summary.progress;
  const share = progress ? progressShare(progress) : undefined;
  const rate =
    props.readings.older && props.readings.newer ? progressRate(props.readings.older, props.readings.newer) : undefined;
  return (
    <div class="detail-grid">
      <section aria-labelledby="state-title" class="card">
        <h2 id="state-title">Now</h2>
        <dl class="facts">
          {progress && (
            <>
              <dt>Progress</dt>
              <dd>
                {share !== undefined && (
                  <progress max={1} value={share} aria-label={`${Math.round(share * 100)} % done`}>
                    {Math.round(share * 100)} %
                  </progress>
                )}
                <div>
                  {formatCount(progress.done)}
                  {progress.total !== undefined && ` of ${formatCount(progress.total)}`}
                  {share !== undefined && ` (${Math.round(share * 100)} %)`}, read {formatUtc(progress.at)}
                </div>
              </dd>
              <dt>Rate</dt>
              <dd data-test="rate">
                {rate ? formatRate(rate.perSecond) : <span class="muted">after two readings</span>}
              </dd>
              <dt>Time left</dt>
              <dd data-test="time-left">
                {rate?.timeLeftMs !== undefined ? (
                  `about ${formatDuration(rate.timeLeftMs)}`
                ) : (
                  <span class="muted">{progress.total === undefined ? 'no total known' : 'after two readings'}</span>
                )}
              </dd>
            </>
          )}
          <dt>Lease</dt>
          <dd>
            {lease ? (
              <>
                {lease.owner ?? 'held'}
                {lease.age && `, last sign of life ${lease.age} ago`}
                {lease.expires && `, ${lease.expires}`}
              </>
            ) : (
              <span class="muted">none</span>
            )}
          </dd>
          <dt>Checkpoint</dt>
          <dd>
            {detail.checkpoint ? (
              <>
                {detail.checkpoint.ageMs !== undefined ? `${formatDuration(detail.checkpoint.ageMs)} old` : 'kept'}
                {detail.checkpoint.parts !== undefined && `, ${formatCount(detail.checkpoint.parts)} parts`}
                {detail.checkpoint.bytes !== undefined && `, ${formatBytes(detail.checkpoint.bytes)}`}
              </>
            ) : (
              <span class="muted">none</span>
            )}
          </dd>
          <dt>Report</dt>
          <dd>
            {detail.report ? (
              <>
                <code class="break">{detail.report.key}</code>{' '}
                <a href={detail.report.href} download data-test="report-link">
                  Download
                </a>
              </>
            ) : (
              <span class="muted">not committed yet</span>
            )}
          </dd>
          <dt>Notification</dt>
          <dd>
            {detail.notification.publishedAt ? (
              <>
                published {formatUtc(detail.notification.publishedAt)}
                {detail.notification.messageId && (
                  <>
                    {' '}
                    (message <code>{detail.notification.messageId}</code>)
                  </>
                )}
              </>
            ) : (
              <span class="muted">not published yet</span>
            )}
          </dd>
          <dt>Read units</dt>
          <dd>{formatCount(detail.readUnits)}</dd>
        </dl>
      </section>
      <section aria-labelledby="row-title" class="card">
        <h2 id="row-title">The row</h2>
        <dl class="facts" data-test="row-fields">
          {fields.map((field) => (
            <Fragment key={field.name}>
              <dt>{field.label}</dt>
              <dd>
                {LINKED.has(field.name) && typeof row[field.name] === 'string' ? (
                  <a href={occurrenceHash(jobId, row[field.name] as string, scheduleKey)}>{field.value}</a>
                ) : field.name === 'lastError' ? (
                  <FoldedError text={field.value} />
                ) : (
                  field.value
                )}
              </dd>
            </Fragment>
          ))}
        </dl>
      </section>
      <section aria-labelledby="attempts-title" class="card wide">
        <h2 id="attempts-title">Attempts</h2>
        {attempts.length === 0 ? (
          <p class="muted">No attempt recorded.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Outcome</th>
                <th scope="col">At</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {attempts.map((attempt, i) => (
                <tr key={i}>
                  <td>{attempt.attempt ?? ''}</td>
                  <td>{attempt.outcome}</td>
                  <td>{formatUtc(attempt.at)}</td>
                  <td>{attempt.error === undefined ? '' : <FoldedError text={attempt.error} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="raw-title" class="card wide">
        <details>
          <summary>
            <h2 id="raw-title">Raw row</h2>
          </summary>
          <pre class="raw">{JSON.stringify(row, null, 2)}</pre>
        </details>
      </section>
    </div>
  );
}
