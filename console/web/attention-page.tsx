/**
 * The attention view, the console's front page (`#/`): what needs an operator across every job in a chosen window
 * (the last hour, day or week, or two UTC times), most urgent first (FAILED, late, RUNNING, BUFFERED, as the server
 * orders them: console/server/attention.ts), then the paused jobs; each one click from its occurrence (a paused job:
 * from its timeline); then the counts by status per job. Filters by kind and by job. Every choice is in the address.
 * Read through the status index: its cost does not grow with jobs.
 */
import { useEffect, useState } from 'preact/hooks';
import { ATTENTION_KINDS, type AttentionItem, type AttentionKind, type AttentionView, type Status } from '../contract';
import { api, errorText } from './api';
import { formatCount, formatDuration, formatRelative, formatUtc } from './format';
import { type AttentionRoute, type AttentionWindow, formatHash, occurrenceHash, timelineHash } from './route';
import { fromInputValue, toInputValue } from './time-range';
import { ErrorNote, FoldedError, StatusBadge, UtcTimeField } from './widgets';

const HOUR_MS = 60 * 60 * 1000;
/** The windows back from now; `custom` is the route's from and to. */
const WINDOW_MS: Record<Exclude<AttentionWindow, 'custom'>, number> = {
  '1h': HOUR_MS,
  '1d': 24 * HOUR_MS,
  '7d': 7 * 24 * HOUR_MS,
};
const WINDOW_LABEL: Record<AttentionWindow, string> = {
  '1h': 'Last hour',
  '1d': 'Last day',
  '7d': 'Last week',
  custom: 'Custom',
};
/** The window the view opens with. */
export const DEFAULT_WINDOW: AttentionWindow = '1d';

const COUNTED: readonly Status[] = ['FAILED', 'RUNNING', 'PENDING', 'RETRY_WAIT', 'BUFFERED'];

const KIND_LABEL: Record<AttentionKind, string> = {
  failed: 'Failed',
  late: 'Late',
  running: 'Running',
  buffered: 'Buffered',
  paused: 'Paused',
};

/** The range a route's window covers: back from now (to a second past it), or the custom one when it reads. */
export function windowRange(route: AttentionRoute, now: number): { from: string; to: string } {
  const from = route.from === undefined ? Number.NaN : Date.parse(route.from);
  const to = route.to === undefined ? Number.NaN : Date.parse(route.to);
  if (route.window === 'custom' && to > from)
    return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
  const ms = route.window === undefined || route.window === 'custom' ? WINDOW_MS['1d'] : WINDOW_MS[route.window];
  return { from: new Date(now - ms).toISOString(), to: new Date(now + 1000).toISOString() };
}

/** The kinds a route's `kind` names (unknown ones left out); undefined: every kind. */
function kindsOf(route: AttentionRoute): AttentionKind[] | undefined {
  const kinds = route.kind?.split(',').filter((k): k is AttentionKind => ATTENTION_KINDS.includes(k as AttentionKind));
  return kinds === undefined || kinds.length === 0 ? undefined : kinds;
}

/** Goes to the view with some choices changed (the address holds them). */
function go(route: AttentionRoute, change: Partial<AttentionRoute>): void {
  const next: Record<string, unknown> = { ...route, ...change };
  for (const name of Object.keys(next)) if (next[name] === undefined) delete next[name];
  location.hash = formatHash(next as unknown as AttentionRoute);
}

type Row =
  | { readonly kind: 'item'; readonly item: AttentionItem }
  | { readonly kind: 'paused'; readonly job: AttentionView['paused'][number] };

export function AttentionPage(props: { readonly route: AttentionRoute; readonly now: () => number }) {
  const { route } = props;
  const [view, setView] = useState<AttentionView>();
  const [error, setError] = useState<string>();
  const [jobIds, setJobIds] = useState<readonly string[]>([]);
  const kinds = kindsOf(route);
  useEffect(() => {
    const abort = new AbortController();
    const range = windowRange(route, props.now());
    const filter = { ...(route.job ? { job: route.job } : {}), ...(kinds ? { kind: kinds.join(',') } : {}) };
    api.attention({ ...range, ...filter }, abort.signal).then(
      (answer) => {
        setView(answer);
        setError(undefined);
        // The job filter's choices: every job seen so far, so that a filtered view still offers the others.
        const seen = [...answer.jobs.map((j) => j.jobId), ...answer.paused.map((p) => p.jobId)];
        setJobIds((known) => [...new Set([...known, ...seen])].sort());
      },
      (e: unknown) => !abort.signal.aborted && setError(errorText(e)),
    );
    return () => abort.abort();
  }, [formatHash(route)]);
  useEffect(() => {
    if (view !== undefined) document.body.dataset.ready = 'attention';
  }, [view]);
  const rows: Row[] = view
    ? [
        ...view.items.map((item) => ({ kind: 'item' as const, item })),
        ...view.paused.map((job) => ({ kind: 'paused' as const, job })),
      ]
    : [];
  return (
    <section aria-labelledby="attention-title">
      <div class="page-head">
        <div>
          <h1 id="attention-title">Needs attention</h1>
          {view && (
            <p class="sub">
              Scheduled from {formatUtc(view.from)} to {formatUtc(view.to)}, {view.job ?? 'every job'};{' '}
              {formatCount(view.readUnits)} read units
            </p>
          )}
        </div>
        <div class="head-side">
          <a href="#/timeline" data-test="all-timeline-link">
            Every job on one time axis
          </a>
        </div>
      </div>
      <AttentionControls route={route} kinds={kinds} jobIds={jobIds} now={props.now} />
      <ErrorNote error={error} />
      {view === undefined && error === undefined && <p class="muted">Loading…</p>}
      {view && rows.length === 0 && <p data-test="all-clear">Nothing failed, late, running, buffered or paused.</p>}
      {view && rows.length > 0 && (
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
              {rows.map((row) =>
                row.kind === 'item' ? (
                  <ItemRow
                    key={`${row.item.jobId}\n${row.item.scheduleKey ?? ''}\n${row.item.scheduledTime}`}
                    item={row.item}
                  />
                ) : (
                  <tr key={`paused\n${row.job.jobId}`} data-attention="paused" data-job={row.job.jobId}>
                    <td>{KIND_LABEL.paused}</td>
                    <td>
                      <a href={timelineHash(row.job.jobId)}>{row.job.jobId}</a>
                    </td>
                    <td>
                      <span class="badge paused-badge">Paused</span>
                    </td>
                    <td>
                      {row.job.cause === 'failures' ? 'paused by its failures' : `by ${row.job.by}`}, since{' '}
                      {formatUtc(row.job.at)} ({formatRelative(Date.parse(row.job.at), props.now())})
                      {row.job.note && <> · “{row.job.note}”</>}
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
          {view.truncated && (
            <p class="notice">More need attention than are listed: the counts below cover them all.</p>
          )}
        </div>
      )}
      {view && view.jobs.length > 0 && <Counts view={view} route={route} />}
    </section>
  );
}

function ItemRow(props: { readonly item: AttentionItem }) {
  const { item } = props;
  return (
    <tr data-attention={item.kind} data-job={item.jobId}>
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
  );
}

/** The window, the kinds and the job: each change is a new address. */
function AttentionControls(props: {
  readonly route: AttentionRoute;
  readonly kinds: readonly AttentionKind[] | undefined;
  readonly jobIds: readonly string[];
  readonly now: () => number;
}) {
  const { route, kinds } = props;
  const current = windowRange(route, props.now());
  const [from, setFrom] = useState(toInputValue(Date.parse(current.from)));
  const [to, setTo] = useState(toInputValue(Date.parse(current.to)));
  const fromMs = fromInputValue(from);
  const toMs = fromInputValue(to);
  const valid = fromMs !== undefined && toMs !== undefined && toMs > fromMs;
  const window = route.window ?? DEFAULT_WINDOW;
  const toggle = (kind: AttentionKind) => {
    const on = new Set(kinds ?? ATTENTION_KINDS);
    if (on.has(kind)) on.delete(kind);
    else on.add(kind);
    const next = ATTENTION_KINDS.filter((k) => on.has(k));
    go(route, { kind: next.length === ATTENTION_KINDS.length || next.length === 0 ? undefined : next.join(',') });
  };
  return (
    <div class="range-controls attention-controls">
      <fieldset class="presets" data-test="attention-window">
        <legend class="sr-only">Window</legend>
        {(['1h', '1d', '7d', 'custom'] as const).map((w) => (
          <button
            key={w}
            type="button"
            aria-pressed={window === w}
            onClick={() =>
              go(route, w === 'custom' ? { window: w, ...current } : { window: w, from: undefined, to: undefined })
            }
          >
            {WINDOW_LABEL[w]}
          </button>
        ))}
      </fieldset>
      {window === 'custom' && (
        <form
          class="range-form"
          onSubmit={(event) => {
            event.preventDefault();
            if (valid)
              go(route, { window: 'custom', from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() });
          }}
        >
          <UtcTimeField label="From (UTC)" name="from" value={from} onInput={setFrom} />
          <UtcTimeField label="To (UTC)" name="to" value={to} onInput={setTo} />
          <button type="submit" disabled={!valid}>
            Show
          </button>
        </form>
      )}
      <fieldset class="kind-filter" data-test="attention-kinds">
        <legend class="sr-only">Show</legend>
        {ATTENTION_KINDS.map((kind) => (
          <label key={kind}>
            <input
              type="checkbox"
              name={kind}
              checked={kinds === undefined || kinds.includes(kind)}
              onChange={() => toggle(kind)}
            />{' '}
            {KIND_LABEL[kind]}
          </label>
        ))}
      </fieldset>
      <label class="job-filter">
        <span>Job</span>
        <select
          name="job"
          value={route.job ?? ''}
          onChange={(e) => go(route, { job: e.currentTarget.value || undefined })}
        >
          <option value="">All jobs</option>
          {[...new Set([...props.jobIds, ...(route.job ? [route.job] : [])])].map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

function Counts(props: { readonly view: AttentionView; readonly route: AttentionRoute }) {
  const { view } = props;
  return (
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
          {[
            { jobId: view.job === undefined ? 'All jobs' : 'In total', counts: view.total, total: true },
            ...view.jobs,
          ].map((job) => (
            <tr key={`${job.jobId}\n${'scheduleKey' in job ? job.scheduleKey : ''}`}>
              <th scope="row">
                {'total' in job ? (
                  job.jobId
                ) : (
                  <a href={timelineHash(job.jobId, 'scheduleKey' in job ? job.scheduleKey : undefined)}>{job.jobId}</a>
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
  );
}

function details(item: AttentionItem) {
  switch (item.kind) {
    case 'failed':
      return item.error === undefined ? '' : <FoldedError text={item.error} />;
    case 'late':
      return item.lateAgainst === 'expectedStart'
        ? `not started, ${formatDuration(item.lateByMs ?? 0)} past its expected start (no lateAfter)`
        : `not started, ${formatDuration(item.lateByMs ?? 0)} past its lateAfter`;
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
