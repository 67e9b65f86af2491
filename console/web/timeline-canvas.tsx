/**
 * The timeline's canvas: the time axis (d3-scale's UTC ticks), one bar per occurrence (waiting, then running),
 * coloured by status, retries marked, a "now" line and the next fire times ahead; when bars would be narrower than a
 * pixel, per-pixel-column bins coloured by status share instead. Hover shows a tooltip, click opens the occurrence
 * (or, on a crowded column, zooms in to it). Marks `timeline-drawn` with the bar count after every draw.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { TimelineBar } from '../contract';
import { formatCount, formatDuration, formatUtc } from './format';
import { STATUS_COLOUR, STATUSES, statusText } from './status';
import type { TimeRange } from './time-range';
import {
  type Bin,
  barAt,
  barTimes,
  binAt,
  binBars,
  binSegments,
  type PlacedBar,
  placeBars,
  placeNowLabel,
  shouldBin,
} from './timeline-layout';
import { timeAxis } from './timeline-scale';
import { Tooltip } from './widgets';

const PAD_X = 12;
const TOP = 20;
const LANE_H = 18;
const LANE_GAP = 6;
const BIN_H = 84;
/** A binned column's width: wide enough that a column reads as a count, not as a 1-pixel run (at 31 days). */
const BIN_PX = 3;
const AXIS_H = 26;

export interface TimelineCanvasProps {
  readonly bars: readonly TimelineBar[];
  readonly next: readonly string[];
  readonly range: TimeRange;
  readonly now: number;
  readonly label: string;
  readonly onOpen: (bar: TimelineBar) => void;
  readonly onZoomTo: (range: TimeRange) => void;
}

type Hover = { readonly x: number; readonly y: number; readonly lines: readonly string[] };

/** The canvas, as wide as its container. */
export function TimelineCanvas(props: TimelineCanvasProps) {
  const wrap = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [hover, setHover] = useState<Hover>();
  useLayoutEffect(() => {
    const element = wrap.current;
    if (element === null) return;
    setWidth(Math.floor(element.clientWidth));
    const observer = new ResizeObserver(() => setWidth(Math.floor(element.clientWidth)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const layout = useMemo(() => {
    if (width === 0) return undefined;
    const started = performance.now();
    const axis = timeAxis(props.range, PAD_X, width - PAD_X);
    const binned = shouldBin(props.bars, axis.x, props.now);
    const placed = binned ? [] : placeBars(props.bars, axis.x, props.now);
    const bins = binned ? binBars(props.bars, axis.x, width, BIN_PX) : [];
    const lanes = binned ? 0 : Math.max(1, ...placed.map((bar) => bar.lane + 1));
    const plotH = binned ? BIN_H : lanes * (LANE_H + LANE_GAP);
    const layoutMs = performance.now() - started;
    return { axis, binned, placed, bins, lanes, plotH, height: TOP + plotH + AXIS_H, layoutMs };
  }, [props.bars, props.range, props.now, width]);
  useEffect(() => {
    const element = canvas.current;
    if (element === null || layout === undefined) return;
    const started = performance.now();
    draw(element, width, layout, props);
    performance.mark('timeline-drawn', {
      // ms: laying the bars out and drawing them, this time (the benchmark reads it).
      detail: { bars: props.bars.length, binned: layout.binned, ms: layout.layoutMs + performance.now() - started },
    });
  }, [layout, props.next]);
  const pick = (event: MouseEvent): { bar?: PlacedBar; bin?: Bin; x: number; y: number } | undefined => {
    if (layout === undefined || canvas.current === null) return undefined;
    const box = canvas.current.getBoundingClientRect();
    const x = event.clientX - box.left;
    const y = event.clientY - box.top;
    if (y < TOP - 4 || y > TOP + layout.plotH) return { x, y };
    if (layout.binned) return { bin: binAt(layout.bins, x), x, y };
    const lane = Math.min(layout.lanes - 1, Math.max(0, Math.floor((y - TOP) / (LANE_H + LANE_GAP))));
    return { bar: barAt(layout.placed, x, lane), x, y };
  };
  return (
    <div class="timeline-wrap" ref={wrap}>
      <canvas
        ref={canvas}
        data-test="timeline"
        role="img"
        aria-label={props.label}
        style={{ width: `${width}px`, height: `${layout?.height ?? 120}px` }}
        onMouseMove={(event) => {
          const hit = pick(event);
          if (hit?.bar) setHover({ x: hit.x, y: hit.y, lines: barLines(props.bars[hit.bar.index], props.now) });
          else if (hit?.bin && layout)
            setHover({ x: hit.x, y: hit.y, lines: binLines(hit.bin, props.bars, layout.axis.timeAt) });
          else setHover(undefined);
        }}
        onMouseLeave={() => setHover(undefined)}
        onClick={(event) => {
          const hit = pick(event);
          if (hit?.bar) props.onOpen(props.bars[hit.bar.index]);
          else if (hit?.bin && layout) {
            if (hit.bin.total === 1) props.onOpen(props.bars[hit.bin.bars[0]]);
            else {
              const t = layout.axis.timeAt(hit.bin.column + BIN_PX / 2);
              const span = ((props.range.to - props.range.from) / width) * 40;
              props.onZoomTo({ from: Math.round(t - span / 2), to: Math.round(t + span / 2) });
            }
          }
        }}
        class={hover ? 'pointing' : undefined}
      />
      {hover && (
        <Tooltip
          lines={hover.lines}
          left={Math.min(Math.max(0, hover.x + 12), Math.max(0, width - 300))}
          top={hover.y + 14}
        />
      )}
    </div>
  );
}

/** The tooltip of one bar. */
export function barLines(bar: TimelineBar, now: number): string[] {
  const times = barTimes(bar, now);
  const lines = [`${statusText(bar.status, bar.skipReason)} · ${formatUtc(bar.scheduledTime)}`];
  const { started } = times;
  if (bar.startedAt && started !== undefined) {
    lines.push(`started ${formatUtc(bar.startedAt)} (waited ${formatDuration(started - times.scheduled)})`);
  }
  if (bar.endedAt) {
    const ran = started === undefined ? '' : ` (ran ${formatDuration(times.ended - started)})`;
    lines.push(`ended ${formatUtc(bar.endedAt)}${ran}`);
  }
  if (bar.attempt > 1) lines.push(`attempt ${bar.attempt} (retried)`);
  if (bar.segments !== undefined && bar.segments > 1) lines.push(`${bar.segments} segments`);
  if (bar.progress)
    lines.push(
      `progress ${formatCount(bar.progress.done)}${bar.progress.total !== undefined ? ` of ${formatCount(bar.progress.total)}` : ''}`,
    );
  if (bar.yieldedTo) lines.push(`yielded to ${formatUtc(bar.yieldedTo)}`);
  if (bar.cancelledBy) lines.push(`cancelled by ${formatUtc(bar.cancelledBy)}`);
  if (bar.origin) lines.push(`recorded by an operator (${bar.origin})`);
  if (bar.lastError) lines.push(`error: ${bar.lastError.slice(0, 160)}`);
  lines.push('Click to open');
  return lines;
}

function binLines(bin: Bin, bars: readonly TimelineBar[], timeAt: (px: number) => number): string[] {
  const lines = [
    `${formatCount(bin.total)} occurrence${bin.total === 1 ? '' : 's'} · ${formatUtc(Math.round(timeAt(bin.column)))}`,
  ];
  for (const status of STATUSES) {
    const count = bin.counts[status];
    if (count) lines.push(`${statusText(status)}: ${formatCount(count)}`);
  }
  lines.push(bin.total === 1 ? `Click to open ${formatUtc(bars[bin.bars[0]].scheduledTime)}` : 'Click to zoom in');
  return lines;
}

interface Layout {
  readonly axis: ReturnType<typeof timeAxis>;
  readonly binned: boolean;
  readonly placed: readonly PlacedBar[];
  readonly bins: readonly Bin[];
  readonly lanes: number;
  readonly plotH: number;
  readonly height: number;
  readonly layoutMs: number;
}

function draw(element: HTMLCanvasElement, width: number, layout: Layout, props: TimelineCanvasProps): void {
  const ratio = window.devicePixelRatio || 1;
  element.width = Math.round(width * ratio);
  element.height = Math.round(layout.height * ratio);
  const ctx = element.getContext('2d');
  if (ctx === null) return;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, layout.height);
  const { axis, plotH } = layout;
  const axisY = TOP + plotH + 4;

  // Grid and axis.
  ctx.font = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'center';
  for (const tick of axis.ticks) {
    ctx.fillStyle = '#e6e8eb';
    ctx.fillRect(Math.round(tick.x), TOP - 4, 1, plotH + 8);
    ctx.fillStyle = '#555b65';
    ctx.fillText(tick.label, tick.x, axisY + 4);
  }
  ctx.fillStyle = '#c5c9d0';
  ctx.fillRect(PAD_X, axisY, width - 2 * PAD_X, 1);

  if (layout.binned) drawBins(ctx, layout);
  else drawBars(ctx, layout, props);

  // Next fire times ahead: hollow ticks above the plot.
  ctx.strokeStyle = '#1565c0';
  ctx.lineWidth = 1.5;
  for (const time of props.next) {
    const x = axis.x(Date.parse(time));
    if (x < PAD_X || x > width - PAD_X) continue;
    ctx.beginPath();
    ctx.moveTo(x - 4, TOP - 14);
    ctx.lineTo(x + 4, TOP - 14);
    ctx.lineTo(x, TOP - 6);
    ctx.closePath();
    ctx.stroke();
  }

  // Now.
  const nowX = axis.x(props.now);
  if (nowX >= PAD_X && nowX <= width - PAD_X) {
    ctx.fillStyle = '#b42318';
    ctx.fillRect(Math.round(nowX), TOP - 16, 1.5, plotH + 20);
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    ctx.font = 'bold 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    // Clear of the next-fire markers it shares its band with (at 31 days the next fire is a pixel from now).
    const markerXs = props.next.map((time) => axis.x(Date.parse(time)));
    const labelWidth = ctx.measureText('now').width;
    const labelX = placeNowLabel({ nowX, labelWidth, markerXs, left: 0, right: width });
    if (labelX !== undefined) ctx.fillText('now', labelX, 2);
  }
}

function drawBars(ctx: CanvasRenderingContext2D, layout: Layout, props: TimelineCanvasProps): void {
  const width = layout.axis.x(props.range.to) + PAD_X;
  for (const placed of layout.placed) {
    if (placed.endX < 0 || placed.scheduledX > width) continue;
    const bar = props.bars[placed.index];
    const y = TOP + placed.lane * (LANE_H + LANE_GAP);
    const colour = STATUS_COLOUR[bar.status];
    if (bar.status === 'SKIPPED') {
      // A skipped run never ran: a diamond at its scheduled time, a dashed line back to the run it yielded to.
      const cx = placed.scheduledX;
      const cy = y + LANE_H / 2;
      if (bar.yieldedTo !== undefined) dashed(ctx, layout.axis.x(Date.parse(bar.yieldedTo)), cx, cy, colour);
      ctx.fillStyle = colour;
      ctx.beginPath();
      ctx.moveTo(cx, cy - 6);
      ctx.lineTo(cx + 5, cy);
      ctx.lineTo(cx, cy + 6);
      ctx.lineTo(cx - 5, cy);
      ctx.closePath();
      ctx.fill();
      continue;
    }
    // Waiting: from scheduled to started (or until now / the end when it never started), a pale band.
    const waitEnd = bar.startedAt === undefined ? placed.endX : placed.startX;
    if (waitEnd > placed.scheduledX) {
      ctx.globalAlpha = 0.3;
      ctx.fillStyle = colour;
      ctx.fillRect(placed.scheduledX, y + 4, Math.max(1, waitEnd - placed.scheduledX), LANE_H - 8);
      ctx.globalAlpha = 1;
    }
    if (bar.cancelledBy !== undefined) {
      // Cancelled by a newer run: a dashed line on to it.
      dashed(ctx, placed.endX, layout.axis.x(Date.parse(bar.cancelledBy)), y + LANE_H / 2, colour);
    }
    if (bar.startedAt !== undefined || bar.status === 'CANCELLED') {
      const x0 = bar.startedAt === undefined ? placed.scheduledX : placed.startX;
      ctx.fillStyle = colour;
      ctx.fillRect(x0, y, Math.max(2, placed.endX - x0), LANE_H);
      if (bar.segments !== undefined && bar.segments > 1) {
        // A long job's segments: a striped top edge.
        ctx.fillStyle = 'rgba(255,255,255,0.75)';
        for (let x = x0 + 2; x < placed.endX - 2; x += 6) ctx.fillRect(x, y + 2, 3, 2);
      }
    } else {
      ctx.strokeStyle = colour;
      ctx.lineWidth = 1;
      ctx.strokeRect(placed.scheduledX + 0.5, y + 0.5, Math.max(2, placed.endX - placed.scheduledX) - 1, LANE_H - 1);
    }
    if (bar.attempt > 1) {
      // Retried: a white-ringed dot at the start.
      ctx.fillStyle = '#ffffff';
      ctx.beginPath();
      ctx.arc(placed.scheduledX + 1, y + 1, 4.5, 0, Math.PI * 2);
      ctx.fill();
      ctx.fillStyle = '#c2410c';
      ctx.beginPath();
      ctx.arc(placed.scheduledX + 1, y + 1, 3, 0, Math.PI * 2);
      ctx.fill();
    }
  }
}

function dashed(ctx: CanvasRenderingContext2D, x0: number, x1: number, y: number, colour: string): void {
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1;
  ctx.setLineDash([3, 3]);
  ctx.beginPath();
  ctx.moveTo(Math.min(x0, x1), Math.round(y) + 0.5);
  ctx.lineTo(Math.max(x0, x1), Math.round(y) + 0.5);
  ctx.stroke();
  ctx.restore();
}

function drawBins(ctx: CanvasRenderingContext2D, layout: Layout): void {
  for (const bin of layout.bins) {
    // A column with a failure gets a red mark above it as well: a 1-pixel share is easy to miss.
    if ((bin.counts.FAILED ?? 0) > 0) {
      ctx.fillStyle = STATUS_COLOUR.FAILED;
      ctx.fillRect(bin.column, TOP - 4, BIN_PX - 1, 3);
    }
    // The column's height grows with its count (log), its colours split by status share.
    const h = Math.max(
      6,
      Math.min(BIN_H, Math.round(BIN_H * (0.35 + 0.65 * Math.min(1, Math.log10(bin.total + 1) / 2)))),
    );
    for (const segment of binSegments(bin, h)) {
      ctx.fillStyle = STATUS_COLOUR[segment.status];
      ctx.fillRect(bin.column, TOP + (BIN_H - h) + segment.y, BIN_PX - 1, segment.h);
    }
  }
}
