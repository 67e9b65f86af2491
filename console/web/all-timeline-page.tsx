/**
 * Every job on one time axis (`#/timeline?window=`): a row per job, its runs as bars coloured by status (or, when they
 * lie too close, buckets of counts by status), its next fires as ticks, and a "now" line; a job whose schedules are
 * made at run time is one row adding up its first keys, and opens into a row per key. The window is 80 % back from
 * now and 20 % ahead. A page of rows at a time (the server's cursor), so that a view's requests do not grow with the
 * number of jobs (console/server/all-timelines.ts).
 */
import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type AllTimelines, MAX_TIMELINE_BUCKETS, type TimelineRow } from '../contract';
import { AxisCanvas, ROW_H, RowCanvas, type RowHit } from './all-timeline-canvas';
import { bucketCount, DEFAULT_TIMELINE_WINDOW, HOUR, WINDOW_LABEL, windowAround } from './all-timeline-layout';
import { api, errorText } from './api';
import { formatCount, formatUtc } from './format';
import { formatHash, occurrenceHash, TIMELINE_WINDOWS, type TimelineWindow, timelineHash } from './route';
import { STATUSES, statusText } from './status';
import { barLines } from './timeline-canvas';
import { timeAxis } from './timeline-scale';
import { ErrorNote, Legend, Tooltip } from './widgets';

/** The label column's width, in CSS pixels. */
const LABEL_PX = 220;

interface Keys {
  readonly rows: readonly TimelineRow[];
  readonly cursor?: string;
  readonly loading: boolean;
  readonly error?: string;
}

type Hover = { readonly top: number; readonly left: number; readonly lines: readonly string[] };

export function AllTimelinePage(props: { readonly window?: TimelineWindow; readonly now: () => number }) {
  const window = props.window ?? DEFAULT_TIMELINE_WINDOW;
  const now = useMemo(() => props.now(), []);
  const range = useMemo(() => windowAround(window, now), [window, now]);
  const plot = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const [cursors, setCursors] = useState<readonly (string | undefined)[]>([undefined]);
  const [view, setView] = useState<AllTimelines>();
  const [error, setError] = useState<string>();
  const [keys, setKeys] = useState<ReadonlyMap<string, Keys>>(new Map());
  const [hover, setHover] = useState<Hover>();
  useLayoutEffect(() => {
    const element = plot.current;
    if (element === null) return;
    const measure = () => setWidth(Math.max(0, Math.floor(element.clientWidth - LABEL_PX)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const buckets = bucketCount(width, MAX_TIMELINE_BUCKETS);
  const cursor = cursors.at(-1);
  const request = { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString(), buckets };
  useEffect(() => {
    if (width === 0) return;
    const abort = new AbortController();
    api.timelines({ ...request, ...(cursor === undefined ? {} : { cursor }) }, abort.signal).then(
      (answer) => {
        setView(answer);
        setError(undefined);
        setKeys(new Map());
      },
      (e: unknown) => !abort.signal.aborted && setError(errorText(e)),
    );
    return () => abort.abort();
  }, [buckets, cursor, range]);
  useEffect(() => {
    if (view !== undefined) document.body.dataset.ready = 'all-timeline';
  }, [view]);
  const axis = useMemo(() => timeAxis(range, 0, Math.max(1, width)), [range, width]);
  const win = { from: range.from, bucketMs: view?.bucketMs ?? (range.to - range.from) / buckets };
  const allNext = useMemo(() => [...new Set((view?.rows ?? []).flatMap((r) => r.next))], [view]);

  const loadKeys = (jobId: string) => {
    const known = keys.get(jobId);
    const update = (k: Keys) => setKeys((all) => new Map(all).set(jobId, k));
    update({ rows: known?.rows ?? [], ...(known?.cursor ? { cursor: known.cursor } : {}), loading: true });
    api.timelines({ ...request, job: jobId, ...(known?.cursor === undefined ? {} : { cursor: known.cursor }) }).then(
      (answer) =>
        update({
          rows: [...(known?.rows ?? []), ...answer.rows],
          ...(answer.cursor === undefined ? {} : { cursor: answer.cursor }),
          loading: false,
        }),
      (e: unknown) => update({ rows: known?.rows ?? [], loading: false, error: errorText(e) }),
    );
  };
  const toggle = (jobId: string) => {
    if (keys.has(jobId)) setKeys((all) => new Map([...all].filter(([id]) => id !== jobId)));
    else loadKeys(jobId);
  };
  const rangeOf = (hit: RowHit): { from: string; to: string } => {
    const from = 'bucket' in hit ? range.from + hit.bucket.index * win.bucketMs : range.from;
    const to = 'bucket' in hit ? from + win.bucketMs : range.to;
    return { from: new Date(Math.floor(from)).toISOString(), to: new Date(Math.ceil(to)).toISOString() };
  };
  const pick = (row: TimelineRow, hit: RowHit) => {
    if ('bar' in hit && row.bars) {
      location.hash = occurrenceHash(row.jobId, row.bars[hit.bar.index].scheduledTime, row.scheduleKey);
    } else if (row.aggregated !== undefined) {
      if (!keys.has(row.jobId)) loadKeys(row.jobId);
    } else {
      location.hash = timelineHash(row.jobId, row.scheduleKey, rangeOf(hit));
    }
  };
  const hovered = (row: TimelineRow) => (hit: RowHit | undefined, x: number, top: number) => {
    if (hit === undefined) return setHover(undefined);
    const lines =
      'bar' in hit && row.bars
        ? barLines(row.bars[hit.bar.index], now)
        : 'bucket' in hit
          ? bucketLines(hit.bucket.counts, rangeOf(hit), row)
          : [];
    setHover({ top: top + ROW_H + 2, left: LABEL_PX + Math.min(x + 12, Math.max(0, width - 300)), lines });
  };

  const rowView = (row: TimelineRow, sub: boolean) => {
    const id = `${row.jobId}${row.scheduleKey === undefined ? '' : `#${row.scheduleKey}`}`;
    const open = keys.get(row.jobId);
    return (
      <div
        class={`at-row${sub ? ' at-sub' : ''}`}
        data-row={id}
        data-job={row.jobId}
        {...(row.scheduleKey === undefined ? {} : { 'data-schedule': row.scheduleKey })}
      >
        <div class="at-label">
          {row.aggregated !== undefined && (
            <button
              type="button"
              class="link expand"
              aria-expanded={open !== undefined}
              onClick={() => toggle(row.jobId)}
              title="Show a row per key"
            >
              {open !== undefined ? '▾' : '▸'}
            </button>
          )}
          <a href={timelineHash(row.jobId, row.scheduleKey, rangeToIso(range))}>{sub ? row.scheduleKey : row.jobId}</a>
          {row.aggregated !== undefined && (
            <span class="muted small">
              {' '}
              {row.aggregated.keys}
              {row.aggregated.moreKeys ? '+' : ''} key{row.aggregated.keys === 1 && !row.aggregated.moreKeys ? '' : 's'}
            </span>
          )}
          {row.paused && <span class="badge paused-badge small">Paused</span>}
        </div>
        <RowCanvas
          row={row}
          axis={axis}
          width={width}
          window={win}
          now={now}
          label={rowLabel(row)}
          onHover={hovered(row)}
          onPick={(hit) => pick(row, hit)}
        />
      </div>
    );
  };

  return (
    <section aria-labelledby="all-timeline-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="#/">Needs attention</a> › <a href="#/jobs">Jobs</a> › Timeline
      </nav>
      <div class="page-head">
        <div>
          <h1 id="all-timeline-title">Every job on one time axis</h1>
          <p class="sub">
            {formatUtc(range.from)} to {formatUtc(range.to)}
            {view && (
              <>
                {' '}
                · {view.jobCount === undefined ? '' : `${formatCount(view.jobCount)} jobs · `}
                {formatCount(view.readUnits)} read units
              </>
            )}
          </p>
        </div>
      </div>
      <div class="range-controls">
        <fieldset class="presets" aria-label="Window">
          {TIMELINE_WINDOWS.map((w) => (
            <button
              key={w}
              type="button"
              aria-pressed={w === window}
              onClick={() => {
                location.hash = formatHash({ page: 'all-timeline', window: w });
              }}
            >
              {WINDOW_LABEL[w]}
            </button>
          ))}
        </fieldset>
      </div>
      <ErrorNote error={error} />
      <div class="all-timeline timeline-wrap" ref={plot}>
        <div class="at-row at-axis">
          <div class="at-label muted small">{width > 0 && `${spanText(win.bucketMs)} a bucket`}</div>
          <AxisCanvas axis={axis} width={width} now={now} next={allNext} />
        </div>
        {view?.rows.map((row) => {
          const open = keys.get(row.jobId);
          return (
            <Fragment key={row.jobId}>
              {rowView(row, false)}
              {open?.rows.map((sub) => rowView(sub, true))}
              {open?.loading && <p class="muted small at-note">Loading keys…</p>}
              {open?.error && <ErrorNote error={open.error} />}
              {open?.cursor && !open.loading && (
                <p class="at-note">
                  <button type="button" class="link" onClick={() => loadKeys(row.jobId)}>
                    More keys of {row.jobId}
                  </button>
                </p>
              )}
            </Fragment>
          );
        })}
        {view?.rows.length === 0 && <p class="muted at-note">No jobs on this page.</p>}
        {hover && <Tooltip lines={hover.lines} left={hover.left} top={hover.top} />}
      </div>
      <div class="timeline-foot">
        <p class="muted small">
          Bars: one run each, from scheduled to ended. Columns: counts in a bucket, split by status. Ticks: next fires.
          Hatched: older occurrences not read (open the job's timeline).
        </p>
        <p>
          {cursors.length > 1 && (
            <button type="button" onClick={() => setCursors((c) => c.slice(0, -1))}>
              ‹ Previous jobs
            </button>
          )}{' '}
          {view?.cursor !== undefined && (
            <button type="button" data-test="next-jobs" onClick={() => setCursors((c) => [...c, view.cursor])}>
              Next jobs ›
            </button>
          )}
        </p>
      </div>
      <Legend />
    </section>
  );
}

function rangeToIso(range: { from: number; to: number }): { from: string; to: string } {
  return { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() };
}

function spanText(ms: number): string {
  if (ms >= 2 * HOUR) return `${Math.round(ms / HOUR)} h`;
  if (ms >= 120_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}

function bucketLines(
  counts: Readonly<Partial<Record<string, number>>>,
  span: { from: string; to: string },
  row: TimelineRow,
): string[] {
  const lines = [`${formatUtc(span.from)} to ${formatUtc(span.to)}`];
  for (const status of STATUSES)
    if (counts[status]) lines.push(`${statusText(status)}: ${formatCount(counts[status] ?? 0)}`);
  lines.push(row.aggregated !== undefined ? 'Click to show a row per key' : "Click to open the job's timeline there");
  return lines;
}

/** A row in words, for screen readers: its counts by status over the window. */
function rowLabel(row: TimelineRow): string {
  const totals = new Map<string, number>();
  for (const [, counts] of row.buckets)
    for (const [status, n] of Object.entries(counts)) totals.set(status, (totals.get(status) ?? 0) + (n ?? 0));
  const parts = STATUSES.filter((s) => totals.has(s)).map((s) => `${totals.get(s)} ${statusText(s).toLowerCase()}`);
  const name = row.scheduleKey === undefined ? row.jobId : `${row.jobId} ${row.scheduleKey}`;
  return `${name}: ${parts.length === 0 ? 'no occurrences' : parts.join(', ')}; ${row.next.length} fires ahead`;
}
