/**
 * The actions' dialogs: pause (a note is required), resume, run now (with an overlap choice), cancel (a note is
 * optional), retry (with force
 * only when the server says the status needs it) and backfill (a dry run's preview before the real one). Each says
 * what will happen, posts to /api/actions/*, and shows the answer.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ActionResult, BackfillPreview, OverlapName, Status } from '../contract';
import {
  type ActionTarget,
  backfillSentence,
  cancelSentence,
  OVERLAP_TEXT,
  OVERLAPS,
  pauseSentence,
  resumeSentence,
  retrySentence,
  runSentence,
  targetName,
} from './action-text';
import { api } from './api';
import { ConfirmDialog, useAction } from './confirm-dialog';
import { formatCount, formatUtc } from './format';
import { fromInputValue, toInputValue } from './time-range';
import { UtcTimeField } from './widgets';

/** Every dialog's props: what it acts on, and what to do when it closes (`changed`: an action went through). */
interface DialogProps {
  readonly target: ActionTarget;
  readonly onClose: (changed: boolean) => void;
}

function scheduleField(target: ActionTarget) {
  return target.scheduleKey === undefined ? {} : { scheduleKey: target.scheduleKey };
}

/**
 * The schedule key a dialog asks for when its target is a job that takes schedules at run time (its template never
 * fires: the action is on one of its schedules); the target with the key typed, and whether one is still missing.
 */
function useScheduleKey(target: ActionTarget) {
  const [key, setKey] = useState('');
  const typed = key.trim();
  const keyed: ActionTarget = target.asksKey && typed !== '' ? { jobId: target.jobId, scheduleKey: typed } : target;
  const field = target.asksKey ? (
    <label class="field">
      <span>Schedule key (this job's schedules are one per key)</span>
      <input type="text" data-field="scheduleKey" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
    </label>
  ) : null;
  return { target: keyed, missing: target.asksKey === true && typed === '', field };
}

/** Pause: a required note. */
export function PauseDialog(props: DialogProps) {
  const [note, setNote] = useState('');
  const action = useAction();
  return (
    <ConfirmDialog
      title={`Pause ${targetName(props.target)}`}
      sentence={pauseSentence(props.target, note)}
      confirmLabel="Pause"
      state={action.state}
      canConfirm={note.trim() !== ''}
      onConfirm={() =>
        action.perform(() =>
          api.pause({ jobId: props.target.jobId, ...scheduleField(props.target), note: note.trim() }),
        )
      }
      onClose={() => props.onClose(action.state.kind === 'done')}
    >
      <label class="field">
        <span>Note (required): why it is paused</span>
        <textarea
          name="note"
          required
          rows={2}
          value={note}
          onInput={(event) => setNote((event.currentTarget as HTMLTextAreaElement).value)}
        />
      </label>
    </ConfirmDialog>
  );
}

/** Resume. */
export function ResumeDialog(props: DialogProps) {
  const action = useAction();
  return (
    <ConfirmDialog
      title={`Resume ${targetName(props.target)}`}
      sentence={resumeSentence(props.target)}
      confirmLabel="Resume"
      state={action.state}
      onConfirm={() => action.perform(() => api.resume({ jobId: props.target.jobId, ...scheduleField(props.target) }))}
      onClose={() => props.onClose(action.state.kind === 'done')}
    />
  );
}

/** Run now, with the overlap choice (default: the job's own policy). */
export function RunDialog(props: DialogProps & { readonly jobOverlap?: OverlapName }) {
  const [overlap, setOverlap] = useState<OverlapName | ''>('');
  const action = useAction();
  const chosen = overlap === '' ? undefined : overlap;
  const key = useScheduleKey(props.target);
  return (
    <ConfirmDialog
      title={`Run ${targetName(props.target)} now`}
      sentence={runSentence(key.target, chosen, props.jobOverlap)}
      confirmLabel="Run now"
      state={action.state}
      canConfirm={!key.missing}
      onConfirm={() =>
        action.perform(() =>
          api.run({
            jobId: props.target.jobId,
            ...scheduleField(key.target),
            ...(chosen ? { overlap: chosen } : {}),
          }),
        )
      }
      onClose={() => props.onClose(action.state.kind === 'done')}
    >
      {key.field}
      <OverlapSelect
        label="If a run is going"
        value={overlap}
        onChange={(value) => setOverlap(value)}
        defaultLabel={props.jobOverlap ? `the job's policy (${props.jobOverlap})` : "the job's policy"}
      />
    </ConfirmDialog>
  );
}

/** Retry: plain first; when the server refuses and says force would enqueue, it offers the forced retry. */
export function RetryDialog(props: DialogProps & { readonly scheduledTime: string; readonly status: Status }) {
  const [force, setForce] = useState(false);
  const action = useAction();
  const { state } = action;
  const refusedButForceable =
    !force &&
    ((state.kind === 'done' && state.result.forceWouldEnqueue === true) ||
      (state.kind === 'failed' && state.body?.forceWouldEnqueue === true));
  const [changed, setChanged] = useState(false);
  return (
    <ConfirmDialog
      title={`Retry ${targetName(props.target)}`}
      sentence={retrySentence(props.target, props.scheduledTime, props.status, force)}
      confirmLabel={force ? 'Retry with force' : 'Retry'}
      state={state}
      onConfirm={async () => {
        const result = await action.perform(() =>
          api.retry({
            jobId: props.target.jobId,
            ...scheduleField(props.target),
            scheduledTime: props.scheduledTime,
            ...(force ? { force: true } : {}),
          }),
        );
        if (result !== undefined) setChanged(true);
      }}
      onClose={() => props.onClose(changed)}
      extra={
        refusedButForceable && (
          <p>
            <button
              type="button"
              data-test="retry-force"
              onClick={() => {
                setForce(true);
                action.reset();
              }}
            >
              Retry with force…
            </button>
          </p>
        )
      }
    />
  );
}

/** Cancel one occurrence, with an optional note saying why. */
export function CancelDialog(props: DialogProps & { readonly scheduledTime: string; readonly status: Status }) {
  const [note, setNote] = useState('');
  const action = useAction();
  return (
    <ConfirmDialog
      title={`Cancel ${targetName(props.target)} at ${props.scheduledTime}`}
      sentence={cancelSentence(props.target, props.scheduledTime, props.status)}
      confirmLabel="Cancel the occurrence"
      state={action.state}
      onConfirm={() =>
        action.perform(() =>
          api.cancel({
            jobId: props.target.jobId,
            ...scheduleField(props.target),
            scheduledTime: props.scheduledTime,
            ...(note.trim() === '' ? {} : { note: note.trim() }),
          }),
        )
      }
      onClose={() => props.onClose(action.state.kind === 'done')}
    >
      <label class="field">
        <span>Note (optional): why it is cancelled</span>
        <textarea
          name="note"
          rows={2}
          value={note}
          onInput={(event) => setNote((event.currentTarget as HTMLTextAreaElement).value)}
        />
      </label>
    </ConfirmDialog>
  );
}

/** Backfill over a range with its overlap policy: a dry run first, shown in the dialog, then the real one. */
export function BackfillDialog(
  props: DialogProps & { readonly from: number; readonly to: number; readonly now: number },
) {
  const [from, setFrom] = useState(toInputValue(props.from));
  const [to, setTo] = useState(toInputValue(Math.min(props.to, props.now)));
  const [overlap, setOverlap] = useState<OverlapName>('bufferAll');
  const key = useScheduleKey(props.target);
  const [preview, setPreview] = useState<{ key: string; value?: BackfillPreview; error?: string }>();
  const action = useAction();
  const fromMs = fromInputValue(from);
  const toMs = fromInputValue(to);
  const valid = fromMs !== undefined && toMs !== undefined && toMs > fromMs && !key.missing;
  const previewKey = `${from}|${to}|${overlap}|${key.target.scheduleKey ?? ''}`;
  useEffect(() => {
    if (!valid) return;
    let current = true;
    setPreview({ key: previewKey });
    api
      .backfill({
        jobId: props.target.jobId,
        ...scheduleField(key.target),
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        overlap,
        dryRun: true,
      })
      .then(
        (value) => current && setPreview({ key: previewKey, value: value as BackfillPreview }),
        (error: unknown) =>
          current && setPreview({ key: previewKey, error: String((error as Error).message ?? error) }),
      );
    return () => {
      current = false;
    };
  }, [previewKey, valid]);
  const ready = valid && preview?.key === previewKey && preview.value !== undefined;
  const sentence = valid
    ? backfillSentence(key.target, fromMs, toMs, overlap, ready ? preview?.value?.planned : undefined)
    : key.missing
      ? 'Type the schedule key to backfill: this job has one schedule per key.'
      : 'Choose a range: the end must be after the start.';
  return (
    <ConfirmDialog
      title={`Backfill ${targetName(props.target)}`}
      sentence={sentence}
      confirmLabel="Backfill"
      state={action.state}
      canConfirm={ready && (preview?.value?.planned ?? 0) > 0}
      onConfirm={() =>
        valid &&
        action.perform(
          (): Promise<ActionResult> =>
            api.backfill({
              jobId: props.target.jobId,
              ...scheduleField(key.target),
              from: new Date(fromMs).toISOString(),
              to: new Date(toMs).toISOString(),
              overlap,
              dryRun: false,
            }),
        )
      }
      onClose={() => props.onClose(action.state.kind === 'done')}
      extra={action.state.kind === 'idle' && <PreviewBox preview={preview} previewKey={previewKey} />}
    >
      {key.field}
      <div class="field-row">
        <UtcTimeField class="field" label="From (UTC)" name="from" value={from} onInput={setFrom} />
        <UtcTimeField class="field" label="To (UTC, not included)" name="to" value={to} onInput={setTo} />
      </div>
      <OverlapSelect
        label="Overlap policy of the backfilled runs"
        value={overlap}
        onChange={(v) => v && setOverlap(v)}
      />
    </ConfirmDialog>
  );
}

function PreviewBox(props: { preview?: { key: string; value?: BackfillPreview; error?: string }; previewKey: string }) {
  const { preview } = props;
  if (preview === undefined) return null;
  if (preview.key !== props.previewKey || (preview.value === undefined && preview.error === undefined)) {
    return <p class="muted">Dry run…</p>;
  }
  if (preview.error !== undefined) {
    return (
      <p class="error" role="alert" data-test="error">
        Dry run failed: {preview.error}
      </p>
    );
  }
  const value = preview.value as BackfillPreview;
  const existing = Object.entries(value.existing).filter(([, n]) => (n ?? 0) > 0);
  return (
    <section class="preview" data-test="backfill-preview" aria-label="Dry run">
      <p>
        <strong>Dry run:</strong> {formatCount(value.planned)} to record. {value.message}
      </p>
      {existing.length > 0 && (
        <p>Already recorded: {existing.map(([status, n]) => `${formatCount(n ?? 0)} ${status}`).join(', ')}.</p>
      )}
      {value.times.length > 0 && (
        <details>
          <summary>
            The first {value.times.length} time{value.times.length === 1 ? '' : 's'}
          </summary>
          <ul class="times">
            {value.times.map((time) => (
              <li key={time}>{formatUtc(time)}</li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function OverlapSelect<T extends OverlapName | ''>(props: {
  label: string;
  value: T;
  onChange: (value: T) => void;
  defaultLabel?: string;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T)}>
        {props.defaultLabel !== undefined && <option value="">{props.defaultLabel}</option>}
        {OVERLAPS.map((name) => (
          <option key={name} value={name}>
            {name}: {OVERLAP_TEXT[name]}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Which dialog is open, if any. */
export type OpenAction =
  | { readonly kind: 'pause' | 'resume' | 'run'; readonly target: ActionTarget; readonly overlap?: OverlapName }
  | {
      readonly kind: 'retry' | 'cancel';
      readonly target: ActionTarget;
      readonly scheduledTime: string;
      readonly status: Status;
    }
  | { readonly kind: 'backfill'; readonly target: ActionTarget; readonly from: number; readonly to: number };

/**
 * A page's action dialogs: which one is open, and the generation of the page's data, which a change made by an action
 * (or `reload`) moves on so that the page reads its data again.
 */
export function useActionDialogs() {
  const [open, setOpen] = useState<OpenAction>();
  const [generation, setGeneration] = useState(0);
  const reload = () => setGeneration((g) => g + 1);
  const close = (changed: boolean) => {
    setOpen(undefined);
    if (changed) reload();
  };
  return { open, setOpen, close, generation, reload };
}

/** The open dialog, or nothing. */
export function ActionDialogs(props: {
  readonly open?: OpenAction;
  readonly now: number;
  readonly onClose: (changed: boolean) => void;
}) {
  const { open } = props;
  if (open === undefined) return null;
  switch (open.kind) {
    case 'pause':
      return <PauseDialog target={open.target} onClose={props.onClose} />;
    case 'resume':
      return <ResumeDialog target={open.target} onClose={props.onClose} />;
    case 'run':
      return <RunDialog target={open.target} jobOverlap={open.overlap} onClose={props.onClose} />;
    case 'retry':
      return (
        <RetryDialog
          target={open.target}
          scheduledTime={open.scheduledTime}
          status={open.status}
          onClose={props.onClose}
        />
      );
    case 'cancel':
      return (
        <CancelDialog
          target={open.target}
          scheduledTime={open.scheduledTime}
          status={open.status}
          onClose={props.onClose}
        />
      );
    case 'backfill':
      return (
        <BackfillDialog target={open.target} from={open.from} to={open.to} now={props.now} onClose={props.onClose} />
      );
  }
}
