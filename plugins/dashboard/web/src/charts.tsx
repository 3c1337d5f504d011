// Time-series charts with uPlot (MIT). Only the views that chart import this file, and they are loaded lazily
// (lazy.tsx), so uPlot stays out of the entry chunk.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";

export interface ChartSeries {
  label: string;
  color: string;
  /** "y" (left axis, default) or "y2" (right axis). */
  scale?: "y" | "y2";
  /** Draw as bars (the events chart) rather than a line. */
  bars?: boolean;
}

/** A tick label for a time in ms, short enough for an axis: the date appears when the span crosses days. */
export function tickLabel(ms: number, spanMs: number): string {
  const d = new Date(ms);
  // Seconds only when the span is a few minutes (else the minute repeats along the axis).
  const hm = d.toLocaleTimeString([], spanMs <= 600_000 ? { hour: "2-digit", minute: "2-digit", second: "2-digit" } : { hour: "2-digit", minute: "2-digit" });
  return spanMs > 86_400_000 ? `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${hm}` : hm;
}

/**
 * One uPlot chart. `data` is [times in ms, ...one array per series] (null = gap). Dragging across it selects a time
 * range: `onZoom(fromMs, toMs)` is called (the caller reloads with that range) instead of uPlot zooming its own scale.
 * The figure carries data-x-ticks (the x axis labels drawn) so a test can read the axis.
 */
export function TimeChart({
  label,
  series,
  data,
  format = (v: number) => String(Math.round(v * 100) / 100),
  format2,
  onZoom,
  height = 180,
  testId,
  xRange,
}: {
  label: string;
  series: ChartSeries[];
  data: (number | null)[][];
  format?: (v: number) => string;
  format2?: (v: number) => string;
  onZoom?: (fromMs: number, toMs: number) => void;
  height?: number;
  testId?: string;
  /** The time range asked for (ms): the x axis spans it even where there is no data. */
  xRange?: [number, number];
}) {
  const box = useRef<HTMLDivElement>(null);
  const fig = useRef<HTMLElement>(null);
  const zoom = useRef(onZoom);
  zoom.current = onZoom;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = data[0] as number[];
    const span = xRange ? xRange[1] - xRange[0] : xs.length > 1 ? xs[xs.length - 1] - xs[0] : 3_600_000;
    const barPaths = uPlot.paths.bars?.({ size: [0.8, 40] });
    // Canvas strokes take colours, not CSS variables: read the theme's (light or dark) once per drawing.
    const muted = getComputedStyle(el).getPropertyValue("--muted").trim() || "#5b6472";
    const grid = { stroke: "rgba(128,128,128,0.2)", width: 1 };
    // Few points (a node polled for minutes, or a short zoom): draw them, a line alone would hardly show.
    const fewPoints = xs.length <= 60;
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 280),
      height,
      // x in ms: uPlot's time scale counts seconds unless ms is 1.
      ms: 1,
      cursor: { drag: { x: true, y: false, setScale: false } },
      scales: { x: { time: true, ...(xRange ? { range: (): uPlot.Range.MinMax => [xRange[0], xRange[1]] } : {}) } },
      legend: { show: true },
      series: [
        { label: "time", value: (_u, v) => (v === null ? "–" : new Date(v).toLocaleString()) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          fill: s.bars ? s.color : undefined,
          width: s.bars ? 0 : 1.5,
          scale: s.scale ?? "y",
          paths: s.bars ? barPaths : undefined,
          points: { show: fewPoints && !s.bars, size: 4 },
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v === null ? "–" : (s.scale === "y2" && format2 ? format2 : format)(v)),
        })),
      ],
      axes: [
        {
          values: (_u, splits) => {
            const labels = splits.map((t) => tickLabel(t, span));
            fig.current?.setAttribute("data-x-ticks", labels.join("|"));
            return labels;
          },
          stroke: muted,
          grid,
        },
        { values: (_u, splits) => splits.map(format), size: 84, stroke: muted, grid },
        ...(series.some((s) => s.scale === "y2")
          ? [
              {
                scale: "y2",
                side: 1 as const,
                values: (_u: uPlot, splits: number[]) => splits.map(format2 ?? format),
                size: 60,
                grid: { show: false },
                stroke: muted,
              },
            ]
          : []),
      ],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 4) return;
            const from = u.posToVal(u.select.left, "x");
            const to = u.posToVal(u.select.left + u.select.width, "x");
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            zoom.current?.(Math.round(from), Math.round(to));
          },
        ],
      },
    };
    const chart = new uPlot(opts, data as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(el.clientWidth, 280), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [data, series.map((s) => s.label).join("|"), height, xRange?.[0], xRange?.[1]]);
  const empty = !data[0]?.length;
  return (
    <figure class="chart uchart" ref={fig} role="img" aria-label={label} data-testid={testId} data-points={data[0]?.length ?? 0}>
      {empty ? <p class="muted">No data in this range.</p> : null}
      <div ref={box} class="uchart-box" hidden={empty} />
    </figure>
  );
}

/** Series of one chart merged onto one time axis: each input is [[ms, value], …] (sorted); missing times are gaps. */
export function align(inputs: [number, number][][]): (number | null)[][] {
  const times = [...new Set(inputs.flatMap((s) => s.map((p) => p[0])))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const out: (number | null)[][] = [times];
  for (const s of inputs) {
    const ys: (number | null)[] = new Array(times.length).fill(null);
    for (const [t, v] of s) ys[index.get(t)!] = v;
    out.push(ys);
  }
  return out;
}
