/**
 * The all-jobs timeline's canvases: the axis (UTC ticks, the next fires of every row shown, and "now", its label
 * placed clear of them), and one row per job or key: its runs as bars coloured by status, or buckets of counts by
 * status share when runs lie too close to be told apart, its next fires as hollow ticks, and the now line.
 */
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { TimelineRow } from '../contract';
import { BUCKET_PX, markAt, type RowBar, type RowBucket, type RowMarks, rowMarks } from './all-timeline-layout';
import { STATUS_COLOUR } from './status';
import { binSegments, placeNowLabel } from './timeline-layout';
import type { TimeAxis } from './timeline-scale';

export const AXIS_H = 34;
export const ROW_H = 26;
const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const NOW_COLOUR = '#b42318';
const FIRE_COLOUR = '#1565c0';

/** A canvas of `width` × `height` CSS pixels, its context scaled to the screen's pixel ratio. */
function prepare(element: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D | null {
  const ratio = window.devicePixelRatio || 1;
  element.width = Math.round(width * ratio);
  element.height = Math.round(height * ratio);
  const ctx = element.getContext('2d');
  if (ctx === null) return null;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

function fireTick(ctx: CanvasRenderingContext2D, x: number, top: number): void {
  ctx.beginPath();
  ctx.moveTo(x - 4, top);
  ctx.lineTo(x + 4, top);
  ctx.lineTo(x, top + 7);
  ctx.closePath();
  ctx.stroke();
}

/** The axis above the rows. */
export function AxisCanvas(props: {
  readonly axis: TimeAxis;
  readonly width: number;
  readonly now: number;
  readonly next: readonly string[];
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const element = canvas.current;
    if (element === null || props.width === 0) return;
    const ctx = prepare(element, props.width, AXIS_H);
    if (ctx === null) return;
    const { axis, width, now } = props;
    ctx.font = FONT;
    ctx.textBaseline = 'top';
    ctx.textAlign = 'center';
    ctx.fillStyle = '#555b65';
    for (const tick of axis.ticks) ctx.fillText(tick.label, tick.x, 3);
    ctx.fillStyle = '#c5c9d0';
    ctx.fillRect(0, AXIS_H - 1, width, 1);
    // Every row's next fires, in the band the now label shares.
    const markerXs = props.next.map((t) => axis.x(Date.parse(t))).filter((x) => x >= 0 && x <= width);
    ctx.strokeStyle = FIRE_COLOUR;
    ctx.lineWidth = 1.5;
    for (const x of markerXs) fireTick(ctx, x, 20);
    const nowX = axis.x(now);
    if (nowX < 0 || nowX > width) return;
    ctx.fillStyle = NOW_COLOUR;
    ctx.fillRect(Math.round(nowX), 17, 1.5, AXIS_H - 17);
    ctx.font = `bold ${FONT}`;
    ctx.textAlign = 'left';
    const labelX = placeNowLabel({ nowX, labelWidth: ctx.measureText('now').width, markerXs, left: 0, right: width });
    if (labelX !== undefined) ctx.fillText('now', labelX, 19);
  }, [props.axis, props.width, props.now, props.next]);
  return (
    <canvas
      ref={canvas}
      data-test="timeline-axis"
      role="img"
      aria-label={`Time axis in UTC; ${props.next.length} fire times ahead shown`}
      style={{ width: `${props.width}px`, height: `${AXIS_H}px` }}
    />
  );
}

/** What the pointer is over in a row: a bar (an index into the row's bars) or a bucket. */
export type RowHit = { readonly bar: RowBar } | { readonly bucket: RowBucket };

/** One row. */
export function RowCanvas(props: {
  readonly row: TimelineRow;
  readonly axis: TimeAxis;
  readonly width: number;
  readonly window: { readonly from: number; readonly bucketMs: number };
  readonly now: number;
  readonly label: string;
  /** `x` in the canvas, `top`: the canvas's offset in the positioned wrap (where a tooltip goes). */
  readonly onHover: (hit: RowHit | undefined, x: number, top: number) => void;
  readonly onPick: (hit: RowHit) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const marks = useMemo(
    () => rowMarks(props.row, props.window, props.axis.x, props.now),
    [props.row, props.axis, props.now],
  );
  useEffect(() => {
    const element = canvas.current;
    if (element === null || props.width === 0) return;
    const ctx = prepare(element, props.width, ROW_H);
    if (ctx === null) return;
    drawRow(ctx, props, marks);
  }, [marks, props.width]);
  const hitAt = (event: MouseEvent): { hit?: RowHit; x: number } => {
    const box = canvas.current?.getBoundingClientRect();
    const x = event.clientX - (box?.left ?? 0);
    const mark = markAt(marks, x);
    if (mark === undefined) return { x };
    return { hit: marks.kind === 'bars' ? { bar: mark as RowBar } : { bucket: mark as RowBucket }, x };
  };
  return (
    <canvas
      ref={canvas}
      role="img"
      aria-label={props.label}
      data-marks={marks.kind}
      style={{ width: `${props.width}px`, height: `${ROW_H}px` }}
      onMouseMove={(event) => {
        const { hit, x } = hitAt(event);
        props.onHover(hit, x, (event.currentTarget as HTMLElement).offsetTop);
      }}
      onMouseLeave={() => props.onHover(undefined, 0, 0)}
      onClick={(event) => {
        const { hit } = hitAt(event);
        if (hit !== undefined) props.onPick(hit);
      }}
    />
  );
}

function drawRow(
  ctx: CanvasRenderingContext2D,
  props: { readonly row: TimelineRow; readonly axis: TimeAxis; readonly width: number; readonly now: number },
  marks: RowMarks,
): void {
  const { axis, width, row } = props;
  for (const tick of axis.ticks) {
    ctx.fillStyle = '#eef0f3';
    ctx.fillRect(Math.round(tick.x), 0, 1, ROW_H);
  }
  if (row.readFrom !== undefined) {
    // Older rows in the range were not read: hatched, so an empty span there is not taken for "nothing ran".
    const x1 = axis.x(Date.parse(row.readFrom));
    ctx.fillStyle = '#f1f2f4';
    ctx.fillRect(0, 2, Math.max(0, x1), ROW_H - 4);
    ctx.strokeStyle = '#d6d9de';
    ctx.lineWidth = 1;
    for (let x = -ROW_H; x < x1; x += 6) {
      ctx.beginPath();
      ctx.moveTo(x, ROW_H - 2);
      ctx.lineTo(Math.min(x1, x + ROW_H - 4), 2);
      ctx.stroke();
    }
  }
  const top = 6;
  const height = ROW_H - 9;
  if (marks.kind === 'bars') {
    for (const bar of marks.bars) {
      ctx.fillStyle = STATUS_COLOUR[bar.status];
      if (bar.startX > bar.x0) {
        // Waiting to start: a pale band, as on a job's timeline.
        ctx.globalAlpha = 0.3;
        ctx.fillRect(bar.x0, top + 4, bar.startX - bar.x0, height - 8);
        ctx.globalAlpha = 1;
      }
      ctx.fillRect(bar.startX, top, bar.x1 - bar.startX, height);
    }
  } else {
    for (const bucket of marks.buckets) {
      // A bucket's height grows with its count (log), its colours split by status share; a 1-pixel gap between.
      const w = Math.max(BUCKET_PX - 1, bucket.x1 - bucket.x0 - 1);
      const h = Math.max(
        5,
        Math.min(height, Math.round(height * (0.4 + 0.6 * Math.min(1, Math.log10(bucket.total + 1) / 2)))),
      );
      for (const segment of binSegments({ column: 0, counts: bucket.counts, total: bucket.total, bars: [] }, h)) {
        ctx.fillStyle = STATUS_COLOUR[segment.status];
        ctx.fillRect(bucket.x0, top + (height - h) + segment.y, w, segment.h);
      }
    }
  }
  ctx.strokeStyle = FIRE_COLOUR;
  ctx.lineWidth = 1.2;
  for (const time of row.next) {
    const x = axis.x(Date.parse(time));
    if (x >= 0 && x <= width) fireTick(ctx, x, 0);
  }
  const nowX = axis.x(props.now);
  if (nowX >= 0 && nowX <= width) {
    ctx.fillStyle = NOW_COLOUR;
    ctx.fillRect(Math.round(nowX), 0, 1.5, ROW_H);
  }
}
