/** The jobs page (`#/`): one row per job, with its schedule, state, last and next runs, history, and actions. */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleConfig, JobSummary, ScheduleSummary } from '../contract';
import { ActionDialogs, type OpenAction, useActionDialogs } from './actions';
import { api, errorText } from './api';
import { formatCount, formatDuration, formatRelative, formatUtc } from './format';
import { timelineHash } from './route';
import { ErrorNote, HistoryStrip, StatusBadge, When } from './widgets';

/** The jobs page. */
export function JobsPage(props: { readonly config: ConsoleConfig; readonly now: () => number }) {
  const [jobs, setJobs] = useState<readonly JobSummary[]>();
  const [readUnits, setReadUnits] = useState<number>();
  const [error, setError] = useState<string>();
  const { open, setOpen, close, generation, reload } = useActionDialogs();
  useEffect(() => {
    const abort = new AbortController();
    api.jobs(abort.signal).then(
      (page) => {
        setJobs(page.jobs);
        setReadUnits(page.readUnits);
        setError(undefined);
      },
      (e: unknown) => !abort.signal.aborted && setError(errorText(e)),
    );
    return () => abort.abort();
  }, [generation]);
  useEffect(() => {
    if (jobs !== undefined) document.body.dataset.ready = 'jobs';
  }, [jobs]);
  const now = props.now();
  return (
    <section aria-labelledby="jobs-title">
      <div class="page-head">
        <h1 id="jobs-title">Jobs</h1>
        <div class="head-side">
          {readUnits !== undefined && <span class="muted">{formatCount(readUnits)} read units</span>}
          <a href="#/timeline" data-test="all-timeline-link">
            Every job on one time axis
          </a>
          <button type="button" onClick={reload}>
            Refresh
          </button>
        </div>
      </div>
      <ErrorNote error={error} />
      {jobs === undefined && error === undefined && <p class="muted">Loading jobs…</p>}
      {jobs !== undefined && jobs.length === 0 && <p>No jobs found.</p>}
      {jobs !== undefined && jobs.length > 0 && (
        <div class="table-wrap">
          <table class="jobs">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Schedule</th>
                <th scope="col">State</th>
                <th scope="col">Overlap</th>
                <th scope="col">Last run</th>
                <th scope="col">Next</th>
                <th scope="col" class="num">
                  Failures in a row
                </th>
                <th scope="col">History</th>
                {!props.config.readOnly && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {jobs.map((job) => (
                <JobRows
                  key={job.jobId + (job.scheduleKey ?? '')}
                  job={job}
                  config={props.config}
                  now={now}
                  onAction={setOpen}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ActionDialogs open={open} now={now} onClose={close} />
    </section>
  );
}

function JobRows(props: {
  readonly job: JobSummary;
  readonly config: ConsoleConfig;
  readonly now: number;
  readonly onAction: (open: OpenAction) => void;
}) {
  const { job, now } = props;
  const [showSchedules, setShowSchedules] = useState(false);
  const columns = props.config.readOnly ? 8 : 9;
  // A job that takes schedules at run time, as a whole: Run now asks for one of its keys.
  const asksKey = job.runtimeSchedules === true && job.scheduleKey === undefined;
  const target = {
    jobId: job.jobId,
    ...(job.scheduleKey ? { scheduleKey: job.scheduleKey } : {}),
    ...(asksKey ? { asksKey } : {}),
  };
  return (
    <>
      <tr data-job={job.jobId}>
        <th scope="row" class="job-id">
          <a href={timelineHash(job.jobId, job.scheduleKey)}>{job.jobId}</a>
          <div class="muted small">{job.worker}</div>
          {job.runtimeSchedules && (
            <button
              type="button"
              class="link"
              aria-expanded={showSchedules}
              onClick={() => setShowSchedules((shown) => !shown)}
            >
              {showSchedules ? 'Hide schedules' : 'Schedules'}
            </button>
          )}
        </th>
        <td>
          <div>{job.runtimeSchedules ? 'Schedules set at run time' : job.scheduleInWords}</div>
          <code class="small">{job.schedule}</code> <span class="muted small">{job.timeZone}</span>
        </td>
        <td>
          {job.paused ? (
            <div class="paused">
              <span class="badge paused-badge">Paused</span>
              {job.pause && (
                <div class="small">
                  {job.pause.cause === 'failures' ? 'after failures' : `by ${job.pause.by}`},{' '}
                  <span title={formatUtc(job.pause.at)}>{formatRelative(Date.parse(job.pause.at), now)}</span>
                  {job.pause.note && <div class="note">“{job.pause.note}”</div>}
                </div>
              )}
            </div>
          ) : (
            <span class="badge active-badge">{job.schedulerState === 'DISABLED' ? 'Disabled' : 'Active'}</span>
          )}
        </td>
        <td>
          {job.overlap ? (
            <code>{job.overlap}</code>
          ) : (
            <span class="muted" title="The deployed schedule does not say; the worker applies the job's policy">
              the job's
            </span>
          )}
        </td>
        <td>
          {job.lastRun ? (
            <>
              <StatusBadge status={job.lastRun.status} />
              <div class="small">
                {job.lastRun.durationMs !== undefined ? formatDuration(job.lastRun.durationMs) : 'running'} ·{' '}
                <span title={formatUtc(job.lastRun.scheduledTime)}>
                  {formatRelative(Date.parse(job.lastRun.scheduledTime), now)}
                </span>
              </div>
            </>
          ) : (
            <span class="muted">never</span>
          )}
        </td>
        <td>{job.next.length > 0 ? <When time={job.next[0]} now={now} block /> : <span class="muted">none</span>}</td>
        <td class={job.failuresInARow > 0 ? 'num bad' : 'num'}>{job.failuresInARow}</td>
        <td>
          <HistoryStrip jobId={job.jobId} scheduleKey={job.scheduleKey} runs={job.recent} />
        </td>
        {!props.config.readOnly && (
          <td class="actions">
            <div class="action-buttons">
              <button
                type="button"
                data-action="run"
                onClick={() => props.onAction({ kind: 'run', target, overlap: job.overlap })}
              >
                Run now
              </button>
              {job.paused ? (
                <button type="button" data-action="resume" onClick={() => props.onAction({ kind: 'resume', target })}>
                  Resume
                </button>
              ) : (
                <button type="button" data-action="pause" onClick={() => props.onAction({ kind: 'pause', target })}>
                  Pause
                </button>
              )}
            </div>
          </td>
        )}
      </tr>
      {showSchedules && (
        <tr class="schedules-row">
          <td colSpan={columns}>
            <SchedulesList job={job} config={props.config} onAction={props.onAction} />
          </td>
        </tr>
      )}
    </>
  );
}

/** A job's run-time schedules, a page at a time, each with its own timeline. */
function SchedulesList(props: {
  readonly job: JobSummary;
  readonly config: ConsoleConfig;
  readonly onAction: (open: OpenAction) => void;
}) {
  const [schedules, setSchedules] = useState<ScheduleSummary[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [done, setDone] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();
  const more = (after?: string) => {
    setLoading(true);
    api.schedules(props.job.jobId, after).then(
      (page) => {
        setSchedules((list) => [...list, ...page.schedules]);
        setCursor(page.cursor);
        setDone(page.cursor === undefined);
        setLoading(false);
      },
      (e: unknown) => {
        setError(errorText(e));
        setLoading(false);
      },
    );
  };
  useEffect(() => more(), []);
  const actions = !props.config.readOnly && props.config.registry;
  return (
    <section class="schedules" aria-label={`Schedules of ${props.job.jobId}`}>
      <ErrorNote error={error} />
      {schedules.length === 0 && !loading && error === undefined && <p class="muted">No schedules.</p>}
      {schedules.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Schedule key</th>
              <th scope="col">Expression</th>
              <th scope="col">Time zone</th>
              <th scope="col">State</th>
              <th scope="col">Updated</th>
              {actions && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {schedules.map((s) => {
              const target = { jobId: s.jobId, scheduleKey: s.scheduleKey };
              return (
                <tr key={s.scheduleKey} data-schedule={s.scheduleKey}>
                  <th scope="row">
                    <a href={timelineHash(s.jobId, s.scheduleKey)}>{s.scheduleKey}</a>
                  </th>
                  <td>
                    <code>{s.expression}</code>
                  </td>
                  <td>{s.timeZone}</td>
                  <td>{s.state === 'ENABLED' ? 'Enabled' : 'Disabled'}</td>
                  <td>{s.updatedAt ? formatUtc(s.updatedAt) : ''}</td>
                  {actions && (
                    <td class="actions">
                      {s.state === 'ENABLED' ? (
                        <button
                          type="button"
                          data-action="pause"
                          onClick={() => props.onAction({ kind: 'pause', target })}
                        >
                          Pause
                        </button>
                      ) : (
                        <button
                          type="button"
                          data-action="resume"
                          onClick={() => props.onAction({ kind: 'resume', target })}
                        >
                          Resume
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {loading && <p class="muted">Loading schedules…</p>}
      {!done && !loading && cursor !== undefined && (
        <button type="button" onClick={() => more(cursor)}>
          More schedules
        </button>
      )}
    </section>
  );
}
