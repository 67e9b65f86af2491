/**
 * The confirmation every action goes through: a modal <dialog> that says in one sentence what will happen, the
 * action's own fields above it, then the server's answer (the ActionResult's message, or the error). Escape closes
 * it (the browser's own cancel), focus returns to the button that opened it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ActionResult } from '../contract';
import { ApiError, errorText } from './api';

/** Where an action is: not yet confirmed, waiting for the server, answered or failed. */
export type ActionState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'busy' }
  | { readonly kind: 'done'; readonly result: ActionResult }
  | { readonly kind: 'failed'; readonly error: string; readonly body?: Readonly<Record<string, unknown>> };

/** Runs an action once and keeps its state for the dialog. */
export function useAction(): {
  readonly state: ActionState;
  readonly perform: (call: () => Promise<ActionResult>) => Promise<ActionResult | undefined>;
  readonly reset: () => void;
} {
  const [state, setState] = useState<ActionState>({ kind: 'idle' });
  return {
    state,
    perform: async (call) => {
      setState({ kind: 'busy' });
      try {
        const result = await call();
        setState({ kind: 'done', result });
        return result;
      } catch (error) {
        setState({
          kind: 'failed',
          error: errorText(error),
          ...(error instanceof ApiError ? { body: error.body } : {}),
        });
        return undefined;
      }
    },
    reset: () => setState({ kind: 'idle' }),
  };
}

/** Outcomes that did nothing: shown as a warning, not a success. */
const REFUSALS = new Set(['refused', 'already-paused', 'already-resumed', 'not-paused']);

export interface ConfirmDialogProps {
  /** The dialog's heading: `Pause weekly-export`. */
  readonly title: string;
  /** What will happen, in one sentence. */
  readonly sentence: string;
  /** The confirm button's words: `Pause`. */
  readonly confirmLabel: string;
  readonly state: ActionState;
  /** False while a required field is empty. */
  readonly canConfirm?: boolean;
  readonly onConfirm: () => void;
  /** Closed: by Cancel, Close, or Escape. */
  readonly onClose: () => void;
  /** The action's fields (a note, an overlap choice), shown until it is confirmed. */
  readonly children?: ComponentChildren;
  /** Shown under the answer (a preview, a retry-with-force offer). */
  readonly extra?: ComponentChildren;
}

/** The confirmation dialog, open while rendered. */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [opener] = useState(() => document.activeElement as HTMLElement | null);
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (!dialog.open) dialog.showModal();
    const closed = () => onClose.current();
    dialog.addEventListener('close', closed);
    return () => {
      dialog.removeEventListener('close', closed);
      if (dialog.open) dialog.close();
      opener?.focus?.();
    };
  }, [opener]);
  const { state } = props;
  const answered = state.kind === 'done' || state.kind === 'failed';
  const close = () => ref.current?.close();
  const closeButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    // The confirm button is gone once answered: keep the keyboard's focus in the dialog, on Close.
    if (answered) closeButton.current?.focus();
  }, [answered]);
  return (
    <dialog ref={ref} data-test="confirm" aria-labelledby="confirm-title" class="confirm">
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          if (!answered && state.kind !== 'busy' && props.canConfirm !== false) props.onConfirm();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        {!answered && props.children}
        <p class="sentence" data-test="confirm-sentence">
          {props.sentence}
        </p>
        <div
          class={state.kind === 'done' && REFUSALS.has(state.result.outcome) ? 'answer refused' : 'answer'}
          data-test="action-result"
          role="status"
        >
          {state.kind === 'busy' && <span class="muted">Working…</span>}
          {state.kind === 'done' && (
            <>
              <strong>{state.result.outcome}</strong>: {state.result.message}
              <span class="by"> Recorded as {state.result.by}.</span>
            </>
          )}
        </div>
        {state.kind === 'failed' && (
          <p class="error" data-test="error" role="alert">
            {state.error}
          </p>
        )}
        {props.extra}
        <div class="buttons">
          {!answered && (
            <button
              type="submit"
              class="primary"
              data-test="confirm-action"
              disabled={state.kind === 'busy' || props.canConfirm === false}
            >
              {props.confirmLabel}
            </button>
          )}
          <button type="button" data-test="cancel-action" onClick={close} ref={closeButton}>
            {answered ? 'Close' : 'Cancel'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
