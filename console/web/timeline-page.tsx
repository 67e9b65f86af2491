/**
 * A job's timeline (`#/job/<jobId>?key&from&to`): its header, the range controls, the canvas, and under it a table of
 * the range's occurrences. The range lives in the URL. Pages of TIMELINE_PAGE_BARS come newest first (`before`) and
 * are drawn as they arrive, up to MAX_TIMELINE_BARS.
 */
import { type ComponentChild, Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { type ConsoleConfig, type JobSummary, MAX_TIMELINE_BARS, type TimelineBar } from '../contract';
import { ActionDialogs, useActionDialogs } from './actions';
import { api, errorText } from './api';
import { formatCount, formatDuration, formatOffset, formatUtc } from './format';
import { occurrenceHash, parseHash, timelineHash } from './route';
import {
  fromInputValue,
  panRange,
  presetRange,
  RANGE_PRESETS,
  rangeFromUrl,
  rangeToUrl,
  type TimeRange,
  toInputValue,
  zoomRange,
} from './time-range';
import { TimelineCanvas } from './timeline-canvas';
import { ErrorNote, Legend, StatusBadge, UtcTimeField, When } from './widgets';

const EMPTY: Loaded = { bars: [], next: [], done: false, capped: false, readUnits: 0 };

/** Rows the table shows at a time. */
const TABLE_STEP = 100;

interface Loaded {
  readonly bars: readonly TimelineBar[];
  readonly next: readonly string[];
  readonly done: boolean;
  readonly capped: boolean;
  readonly readUnits: number;
  readonly error?: string;
}

/** The timeline page. */
export function TimelinePage(props: {
  readonly config: ConsoleConfig;
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly from?: string;
  readonly to?: string;
  readonly now: () => number;
}) {
  const { jobId, scheduleKey } = props;
  const range = useMemo(() => rangeFromUrl(props.from, props.to, props.now()), [props.from, props.to]);
  const now = useMemo(() => props.now(), [range]);
  const go = (next: TimeRange, replace = false) => {
    const hash = timelineHash(jobId, scheduleKey, rangeToUrl(next));
    if (replace) history.replaceState(null, '', hash);
    else location.hash = hash;
  };
  /**
   * Moves from the range in the URL now, not the one this render saw: a second key press before the hashchange is
   * handled steps from the first one's range.
   */
  const step = (change: (current: TimeRange) => TimeRange) => {
    const route = parseHash(location.hash);
    const current = route.page === 'timeline' ? rangeFromUrl(route.from, route.to, props.now()) : range;
    go(change(current));
  };
  useEffect(() => {
    // Put the default range in the URL, so that a reload or a shared link shows the same range.
    if (props.from === undefined || props.to === undefined) go(range, true);
  }, [range]);

  const [job, setJob] = useState<JobSummary>();
  const [jobError, setJobError] = useState<string>();
  const { open, setOpen, close, generation } = useActionDialogs();
  useEffect(() => {
    const abort = new AbortController();
    api
      .job(jobId, scheduleKey, abort.signal)
      .then(setJob, (e: unknown) => !abort.signal.aborted && setJobError(errorText(e)));
    return () => abort.abort();
  }, [jobId, scheduleKey, generation]);

  const [stored, setLoaded] = useState<{ readonly range: TimeRange; readonly loaded: Loaded }>();
  useEffect(() => {
    const abort = new AbortController();
    void loadRange(jobId, scheduleKey, range, abort.signal, (loaded) => setLoaded({ range, loaded }));
    return () => abort.abort();
  }, [jobId, scheduleKey, range, generation]);
  // Another range's bars are not drawn on this one's axis while its first page loads.
  const loaded = stored?.range === range ? stored.loaded : EMPTY;
  useEffect(() => {
    if (loaded.done) document.body.dataset.ready = 'timeline';
  }, [loaded.done]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey || document.querySelector('dialog[open]')) return;
      const target = event.target;
      if (target instanceof Element && target.closest('input, textarea, select, [contenteditable]')) return;
      if (event.key === '+' || event.key === '=') step((r) => zoomRange(r, 0.5));
      else if (event.key === '-' || event.key === '_') step((r) => zoomRange(r, 2));
      else if (event.key === 'ArrowLeft') step((r) => panRange(r, -1));
      else if (event.key === 'ArrowRight') step((r) => panRange(r, 1));
      else return;
      event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  // A job that takes schedules at run time, seen as a whole: run now and backfill ask for one of its keys.
  const asksKey = job?.runtimeSchedules === true && scheduleKey === undefined;
  const target = { jobId, ...(scheduleKey ? { scheduleKey } : {}), ...(asksKey ? { asksKey } : {}) };
  const title = scheduleKey === undefined ? jobId : `${jobId} · ${scheduleKey}`;
  const canAct = !props.config.readOnly;
  return (
    <section aria-labelledby="timeline-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/jobs">Jobs</a> <span aria-hidden="true">›</span> <span>{title}</span>
      </nav>
      <div class="page-head">
        <div>
          <h1 id="timeline-title">{title}</h1>
          {job && (
            <p class="sub">
              {job.runtimeSchedules && scheduleKey === undefined ? 'Schedules set at run time' : job.scheduleInWords} ·{' '}
              <code>{job.schedule}</code> · {job.timeZone}
              {job.overlap && (
                <>
                  {' '}
                  · overlap <code>{job.overlap}</code>
                </>
              )}
              {job.paused && (
                <>
                  {' '}
                  · <span class="badge paused-badge">Paused</span> {job.pause?.note ? `“${job.pause.note}”` : ''}
                </>
              )}
            </p>
          )}
          <ErrorNote error={jobError} />
        </div>
        {canAct && (
          <div class="head-side">
            <button
              type="button"
              data-action="run"
              onClick={() => setOpen({ kind: 'run', target, overlap: job?.overlap })}
            >
              Run now
            </button>
            {job?.paused ? (
              <button type="button" data-action="resume" onClick={() => setOpen({ kind: 'resume', target })}>
                Resume
              </button>
            ) : (
              <button type="button" data-action="pause" onClick={() => setOpen({ kind: 'pause', target })}>
                Pause
              </button>
            )}
            <button
              type="button"
              data-action="backfill"
              onClick={() => setOpen({ kind: 'backfill', target, from: range.from, to: range.to })}
            >
              Backfill…
            </button>
          </div>
        )}
      </div>
      <RangeControls range={range} onChange={(next) => go(next)} onStep={step} />
      <TimelineCanvas
        bars={loaded.bars}
        next={loaded.next}
        range={range}
        now={now}
        label={`Timeline of ${formatCount(loaded.bars.length)} occurrences from ${formatUtc(range.from)} to ${formatUtc(range.to)}; the table below lists them.`}
        onOpen={(bar) => {
          location.hash = occurrenceHash(jobId, bar.scheduledTime, scheduleKey);
        }}
        onZoomTo={(next) => go(next)}
      />
      <div class="timeline-foot">
        <Legend />
        <p class="muted small" aria-live="polite">
          {loaded.done ? 'Loaded' : 'Loading…'} {formatCount(loaded.bars.length)} occurrence
          {loaded.bars.length === 1 ? '' : 's'} · {formatCount(loaded.readUnits)} read units
        </p>
      </div>
      {loaded.capped && (
        <p class="notice" role="status" data-test="capped">
          Showing the newest {formatCount(MAX_TIMELINE_BARS)} occurrences of this range only: choose a narrower range to
          see the rest.
        </p>
      )}
      <ErrorNote error={loaded.error} />
      {loaded.next.length > 0 && (
        <p class="small next-line">
          Next: <When time={loaded.next[0]} now={now} />
          {loaded.next.length > 1 && <span class="muted"> and {loaded.next.length - 1} more ahead in range</span>}
        </p>
      )}
      <OccurrenceTable jobId={jobId} scheduleKey={scheduleKey} bars={loaded.bars} now={now} />
      <ActionDialogs open={open} now={now} onClose={close} />
    </section>
  );
}

/** Loads a range page by page, newest first, handing each step to `update`; stops at MAX_TIMELINE_BARS. */
async function loadRange(
  jobId: string,
  scheduleKey: string | undefined,
  range: TimeRange,
  signal: AbortSignal,
  update: (loaded: Loaded) => void,
): Promise<void> {
  const { from, to } = rangeToUrl(range);
  let bars: TimelineBar[] = [];
  let next: readonly string[] = [];
  let readUnits = 0;
  let before: string | undefined;
  try {
    for (;;) {
      const page = await api.timeline(
        { job: jobId, ...(scheduleKey ? { key: scheduleKey } : {}), from, to, ...(before ? { before } : {}) },
        signal,
      );
      if (signal.aborted) return;
      bars = bars.concat(page.bars);
      if (before === undefined) next = page.next;
      readUnits += page.readUnits;
      before = page.before;
      const capped = before !== undefined && bars.length >= MAX_TIMELINE_BARS;
      const done = before === undefined || capped || page.bars.length === 0;
      update({ bars, next, readUnits, done, capped });
      if (done) return;
    }
  } catch (error) {
    if (signal.aborted) return;
    update({ bars, next, readUnits, done: true, capped: false, error: errorText(error) });
  }
}

/** Presets, from/to, zoom and pan. */
function RangeControls(props: {
  readonly range: TimeRange;
  readonly onChange: (range: TimeRange) => void;
  readonly onStep: (change: (current: TimeRange) => TimeRange) => void;
}) {
  const { range } = props;
  const [from, setFrom] = useState(toInputValue(range.from));
  const [to, setTo] = useState(toInputValue(range.to));
  useEffect(() => {
    setFrom(toInputValue(range.from));
    setTo(toInputValue(range.to));
  }, [range]);
  const width = range.to - range.from;
  const fromMs = fromInputValue(from);
  const toMs = fromInputValue(to);
  const valid = fromMs !== undefined && toMs !== undefined && toMs > fromMs;
  return (
    <div class="range-controls">
      <fieldset class="presets">
        <legend class="sr-only">Range</legend>
        {RANGE_PRESETS.map((preset) => (
          <button
            key={preset.label}
            type="button"
            aria-pressed={Math.abs(width - preset.ms) < 1000}
            onClick={() => props.onChange(presetRange(preset.ms, Date.now()))}
          >
            {preset.label}
          </button>
        ))}
      </fieldset>
      <form
        class="range-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (valid) props.onChange({ from: fromMs, to: toMs });
        }}
      >
        <UtcTimeField label="From (UTC)" name="from" value={from} onInput={setFrom} />
        <UtcTimeField label="To (UTC)" name="to" value={to} onInput={setTo} />
        <button type="submit" disabled={!valid}>
          Show
        </button>
      </form>
      <fieldset class="zoom">
        <legend class="sr-only">Zoom and pan</legend>
        <button
          type="button"
          onClick={() => props.onStep((r) => panRange(r, -1))}
          aria-label="Earlier (←)"
          title="Earlier (←)"
        >
          ← Earlier
        </button>
        <button
          type="button"
          onClick={() => props.onStep((r) => zoomRange(r, 2))}
          aria-label="Zoom out (-)"
          title="Zoom out (-)"
        >
          −
        </button>
        <button
          type="button"
          onClick={() => props.onStep((r) => zoomRange(r, 0.5))}
          aria-label="Zoom in (+)"
          title="Zoom in (+)"
        >
          +
        </button>
        <button
          type="button"
          onClick={() => props.onStep((r) => panRange(r, 1))}
          aria-label="Later (→)"
          title="Later (→)"
        >
          Later →
        </button>
      </fieldset>
      <p class="muted small range-text">
        {formatUtc(range.from)} – {formatUtc(range.to)} ({formatDuration(width)}) · keys: <kbd>+</kbd> <kbd>−</kbd>{' '}
        zoom, <kbd>←</kbd> <kbd>→</kbd> pan
      </p>
    </div>
  );
}

/** The range's occurrences as a table, 100 rows at a time. */
function OccurrenceTable(props: {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly bars: readonly TimelineBar[];
  readonly now: number;
}) {
  const [shown, setShown] = useState(TABLE_STEP);
  const rows = props.bars.slice(0, shown);
  return (
    <section aria-labelledby="occurrences-title" class="occurrences">
      <h2 id="occurrences-title">Occurrences in range</h2>
      {props.bars.length === 0 ? (
        <p class="muted">None in this range.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Scheduled</th>
                <th scope="col">Status</th>
                <th scope="col">Started after</th>
                <th scope="col">Took</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((bar) => (
                <OccurrenceRow
                  key={bar.scheduledTime}
                  bar={bar}
                  jobId={props.jobId}
                  scheduleKey={props.scheduleKey}
                  now={props.now}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {props.bars.length > shown && (
        <button type="button" class="more" onClick={() => setShown((n) => n + TABLE_STEP)}>
          Show {Math.min(TABLE_STEP, props.bars.length - shown)} more ({formatCount(props.bars.length - shown)} left)
        </button>
      )}
    </section>
  );
}

function OccurrenceRow(props: {
  readonly bar: TimelineBar;
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly now: number;
}) {
  const { bar } = props;
  const started = bar.startedAt ? Date.parse(bar.startedAt) : undefined;
  const ended = bar.endedAt ? Date.parse(bar.endedAt) : undefined;
  const details: ComponentChild[] = [];
  const linkTo = (time: string) => <a href={occurrenceHash(props.jobId, time, props.scheduleKey)}>{formatUtc(time)}</a>;
  if (bar.status === 'SKIPPED' && bar.skipReason) details.push(`skipped for ${bar.skipReason}`);
  if (bar.yieldedTo) details.push(<>yielded to {linkTo(bar.yieldedTo)}</>);
  if (bar.cancelledBy) details.push(<>cancelled by {linkTo(bar.cancelledBy)}</>);
  if (bar.origin) details.push(`by an operator (${bar.origin})`);
  if (bar.segments !== undefined && bar.segments > 1) details.push(`${bar.segments} segments`);
  if (bar.progress) {
    details.push(
      `progress ${formatCount(bar.progress.done)}${bar.progress.total !== undefined ? ` of ${formatCount(bar.progress.total)}` : ''}`,
    );
  }
  return (
    <tr data-occurrence={bar.scheduledTime} data-status={bar.status} data-skip-reason={bar.skipReason}>
      <th scope="row">
        <a href={occurrenceHash(props.jobId, bar.scheduledTime, props.scheduleKey)}>{formatUtc(bar.scheduledTime)}</a>
      </th>
      <td>
        <StatusBadge status={bar.status} skipReason={bar.skipReason} />
      </td>
      <td>{started !== undefined ? formatOffset(started - Date.parse(bar.scheduledTime)) : ''}</td>
      <td>
        {started !== undefined && ended !== undefined
          ? formatDuration(ended - started)
          : started !== undefined
            ? `${formatDuration(props.now - started)} so far`
            : ''}
      </td>
      <td class={bar.attempt > 1 ? 'num bad' : 'num'}>{bar.attempt}</td>
      <td class="details">
        {details.map((detail, i) => (
          <Fragment key={i}>
            {i > 0 && ' · '}
            {detail}
          </Fragment>
        ))}
        {bar.lastError && <div class="err-text">{bar.lastError}</div>}
      </td>
    </tr>
  );
}
