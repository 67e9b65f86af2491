/** Small pieces shared by the pages: a status badge, the history strip, a time with its relative words. */
import type { RecentRun, SkipReasonName, Status } from '../contract';
import { errorHead, formatRelative, formatUtc } from './format';
import { occurrenceHash } from './route';
import { historySummary, STATUS_COLOUR, STATUS_LABEL, STATUSES, statusText } from './status';

/** A status as a coloured badge with its words. */
export function StatusBadge(props: { readonly status: Status; readonly skipReason?: SkipReasonName }) {
  return (
    <span class={`badge status-${props.status}`} data-status={props.status}>
      {statusText(props.status, props.skipReason)}
    </span>
  );
}

/** The last runs' statuses, oldest on the left, each cell a link to its occurrence with a text label. */
export function HistoryStrip(props: {
  readonly jobId: string;
  readonly scheduleKey?: string;
  readonly runs: readonly RecentRun[];
}) {
  const runs = [...props.runs].reverse();
  if (runs.length === 0) return <span class="muted">no runs yet</span>;
  // One tab stop per job, not twenty: the summary is read out, the cells are for the mouse (the timeline's table
  // lists every run for the keyboard).
  return (
    <>
      <span class="sr-only">{historySummary(props.runs)}</span>
      <ul class="strip" aria-label={`The last ${runs.length} runs, oldest first`}>
        {runs.map((run) => {
          const label = `${formatUtc(run.scheduledTime)}: ${statusText(run.status, run.skipReason)}`;
          return (
            <li key={run.scheduledTime}>
              <a
                href={occurrenceHash(props.jobId, run.scheduledTime, props.scheduleKey)}
                class={`cell status-${run.status}`}
                title={label}
                tabIndex={-1}
              >
                <span class="sr-only">{label}</span>
              </a>
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** A time as `in 5 min` with the absolute UTC time beside it (and in a <time> element). */
export function When(props: { readonly time: string; readonly now: number; readonly block?: boolean }) {
  const ms = Date.parse(props.time);
  return (
    <time dateTime={props.time} title={formatUtc(props.time)} class={props.block ? 'when block' : 'when'}>
      <span>{formatRelative(ms, props.now)}</span> <span class="abs">{formatUtc(props.time)}</span>
    </time>
  );
}

/** The statuses' colours and words. */
export function Legend() {
  return (
    <ul class="legend" aria-label="Colours of the statuses">
      {STATUSES.map((status) => (
        <li key={status}>
          <span class="swatch" style={{ background: STATUS_COLOUR[status] }} aria-hidden="true" />
          {STATUS_LABEL[status]}
        </li>
      ))}
      <li>
        <span class="swatch wait" aria-hidden="true" /> waiting to start
      </li>
      <li>
        <span class="swatch retry" aria-hidden="true" /> retried
      </li>
      <li>
        <span class="swatch next" aria-hidden="true" /> next fire times
      </li>
      <li>
        <span class="swatch link" aria-hidden="true" /> yielded to / cancelled by
      </li>
    </ul>
  );
}

/** An error's place on the page. */
export function ErrorNote(props: { readonly error?: string }) {
  if (props.error === undefined) return null;
  return (
    <p class="error" role="alert" data-test="error">
      {props.error}
    </p>
  );
}

/** An error folded to its first line; the whole text (a stack, a long message) one click away. */
export function FoldedError(props: { readonly text: string }) {
  const { head, folded } = errorHead(props.text);
  if (!folded) return <span class="err-text">{head}</span>;
  return (
    <details class="err-fold" data-test="error-fold">
      <summary class="err-text">{head}</summary>
      <pre class="err-text err-full">{props.text}</pre>
    </details>
  );
}

/**
 * A time typed in UTC, 24 hours (`2026-12-02 07:57:36`, time-range.ts), with its label: a text input, since
 * `datetime-local` shows the browser's locale (`12/02/2026, 07:57:36 AM`) under a label that says UTC.
 */
export function UtcTimeField(props: {
  readonly label: string;
  readonly name: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly class?: string;
}) {
  return (
    <label class={props.class}>
      <span>{props.label}</span>
      <input
        type="text"
        name={props.name}
        class="time-input"
        inputMode="numeric"
        spellcheck={false}
        autoComplete="off"
        placeholder="YYYY-MM-DD HH:MM:SS"
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </label>
  );
}

/** A timeline's tooltip at `left`, `top` (pixels in its container): the first line as its heading. */
export function Tooltip(props: { readonly lines: readonly string[]; readonly left: number; readonly top: number }) {
  return (
    <div class="tooltip" role="tooltip" style={{ left: `${props.left}px`, top: `${props.top}px` }}>
      {props.lines.map((line, i) => (
        <div key={i} class={i === 0 ? 'tip-head' : undefined}>
          {line}
        </div>
      ))}
    </div>
  );
}
