// A node's graphs (route #/node/<id>/graphs?metric=…&ifindex=…&from=…&to=…): CPU, memory, storage, round-trip time
// and every interface, over a preset range, a custom one, or one selected by dragging across a chart.
import { useEffect, useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { align, TimeChart, type ChartSeries } from "../charts.tsx";
import { api, unwrapped, useLoad } from "../session.tsx";
import { ErrorNote, fmtBps, Section } from "../ui.tsx";

type Series = Schemas["NodeSeriesView"];

export const PRESETS: Record<string, number> = { "1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400 };
/** Points per chart we aim at: the history's step is the range divided by this (at least 1 s). */
const TARGET_POINTS = 600;
const COLORS = ["#3b82f6", "#10b981", "#f59e0b", "#ef4444", "#8b5cf6", "#14b8a6", "#ec4899", "#64748b"];
const MEMORY = /memory|ram|swap/i;

interface Range {
  from: number;
  to: number;
}
interface Line {
  metric: string;
  ifindex?: number;
  row?: number;
  label: string;
  scale?: "y" | "y2";
}

const pct = (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} %`;
const ms = (v: number) => `${v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v.toFixed(0)} ms`;
const perSec = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(0)}/s`;
/** A Unix-seconds (or ms) query value as ms; NaN when absent or not a number. */
const boundMs = (v: string | null) => (v && /^\d+$/.test(v) ? (v.length > 11 ? Number(v) : Number(v) * 1000) : NaN);
/** datetime-local's value for a time (local time, minutes). */
const localInput = (t: number) => {
  const d = new Date(t - new Date(t).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

export function NodeGraphs({ id, query }: { id: string; query: string }) {
  const params = useMemo(() => new URLSearchParams(query), [query]);
  const focus = { metric: params.get("metric"), ifindex: params.get("ifindex") === null ? null : Number(params.get("ifindex")) };
  const [preset, setPreset] = useState<string>(() => (Number.isFinite(boundMs(params.get("from"))) ? "custom" : "1h"));
  const [range, setRange] = useState<Range>(() => {
    const to = boundMs(params.get("to"));
    const end = Number.isFinite(to) ? to : Date.now();
    const from = boundMs(params.get("from"));
    return { from: Number.isFinite(from) && from < end ? from : end - PRESETS["1h"] * 1000, to: end };
  });
  /** The range before a zoom, for "Reset zoom". */
  const [unzoomed, setUnzoomed] = useState<{ preset: string; range: Range } | null>(null);
  const [draft, setDraft] = useState({ from: localInput(range.from), to: localInput(range.to) });
  const [draftError, setDraftError] = useState<string | null>(null);

  // The address says the range shown (a reload or a shared link shows the same), without a navigation.
  useEffect(() => {
    const q = new URLSearchParams(params);
    q.set("from", String(Math.floor(range.from / 1000)));
    q.set("to", String(Math.ceil(range.to / 1000)));
    history.replaceState(null, "", `#/node/${id}/graphs?${q.toString()}`);
    setDraft({ from: localInput(range.from), to: localInput(range.to) });
  }, [range.from, range.to]);

  const choose = (p: string) => {
    const to = Date.now();
    setPreset(p);
    setUnzoomed(null);
    setRange({ from: to - PRESETS[p] * 1000, to });
  };
  const zoom = (from: number, to: number) => {
    if (to - from < 10_000) return;
    setUnzoomed((u) => u ?? { preset, range });
    setPreset("zoom");
    setRange({ from, to });
  };
  const applyCustom = (e: Event) => {
    e.preventDefault();
    const from = new Date(draft.from).getTime();
    const to = new Date(draft.to).getTime();
    if (!Number.isFinite(from) || !Number.isFinite(to) || from >= to) {
      setDraftError("From must be a time before To.");
      return;
    }
    setDraftError(null);
    setUnzoomed(null);
    setPreset("custom");
    setRange({ from, to });
  };

  const node = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } })), [id]);
  const series = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}/metrics", { params: { path: { id } } })), [id]);
  const ifaces = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}/interfaces", { params: { path: { id } } })), [id]);
  const rows = (metric: string, keep: (s: Series) => boolean = () => true) =>
    (series.data ?? []).filter((s) => s.metric === metric && s.row !== null && keep(s)).map((s) => ({ metric, row: s.row!, label: s.name ?? `row ${s.row}` }));
  const cpu = rows("cpu_load_pct");
  const memory = rows("storage_used_pct", (s) => MEMORY.test(s.name ?? ""));
  const storage = rows("storage_used_pct", (s) => !MEMORY.test(s.name ?? ""));
  const focusKey = focus.metric?.startsWith("if_")
    ? `if-${focus.ifindex}`
    : focus.metric === "cpu_load_pct"
      ? "cpu"
      : focus.metric === "storage_used_pct"
        ? "storage"
        : focus.metric === "rtt_ms" || focus.metric === "reachable"
          ? "rtt"
          : null;
  useEffect(() => {
    if (focusKey && series.data && ifaces.data) document.getElementById(`graph-${focusKey}`)?.scrollIntoView({ block: "center" });
  }, [focusKey, Boolean(series.data && ifaces.data)]);

  const common = { id, range, onZoom: zoom };
  return (
    <div class="grid graphs">
      <Section
        title={node.data ? `Graphs of ${node.data.name}` : "Graphs"}
        actions={
          <a href={`#/node/${id}`} class="small">
            Node details
          </a>
        }
      >
        <ErrorNote error={node.error ?? series.error ?? ifaces.error} />
        <div class="range-bar" role="group" aria-label="Time range">
          {Object.keys(PRESETS).map((p) => (
            <button key={p} type="button" class="small" aria-pressed={preset === p} onClick={() => choose(p)}>
              {p}
            </button>
          ))}
          <form class="custom-range" onSubmit={applyCustom} aria-label="Custom range">
            <label>
              From <input type="datetime-local" value={draft.from} onInput={(e) => setDraft({ ...draft, from: (e.target as HTMLInputElement).value })} />
            </label>
            <label>
              To <input type="datetime-local" value={draft.to} onInput={(e) => setDraft({ ...draft, to: (e.target as HTMLInputElement).value })} />
            </label>
            <button type="submit" class="small" aria-pressed={preset === "custom"}>
              Apply
            </button>
          </form>
          {unzoomed ? (
            <button
              type="button"
              class="small"
              onClick={() => {
                setPreset(unzoomed.preset);
                setRange(unzoomed.range);
                setUnzoomed(null);
              }}
            >
              Reset zoom
            </button>
          ) : null}
        </div>
        {draftError ? (
          <p class="error" role="alert">
            {draftError}
          </p>
        ) : null}
        <p class="muted" data-testid="graph-range">
          {new Date(range.from).toLocaleString()} – {new Date(range.to).toLocaleString()} · drag across a chart to zoom
        </p>
      </Section>
      <Graph key="cpu" gid="cpu" title="CPU load" lines={cpu} format={pct} focus={focusKey === "cpu"} {...common} />
      <Graph key="memory" gid="memory" title="Memory used" lines={memory} format={pct} focus={focusKey === "storage"} {...common} />
      <Graph key="storage" gid="storage" title="Storage used" lines={storage} format={pct} focus={false} {...common} />
      <Graph key="rtt" gid="rtt" title="Round-trip time" lines={[{ metric: "rtt_ms", label: "rtt" }]} format={ms} focus={focusKey === "rtt"} {...common} />
      {(ifaces.data ?? []).map((i) => (
        <Graph
          key={`if-${i.ifindex}`}
          gid={`if-${i.ifindex}`}
          title={`Interface ${i.if_name ?? i.ifindex}${i.if_alias ? ` (${i.if_alias})` : ""}`}
          lines={[
            { metric: "if_in_bps", ifindex: i.ifindex, label: "in" },
            { metric: "if_out_bps", ifindex: i.ifindex, label: "out" },
            { metric: "if_in_errors_ps", ifindex: i.ifindex, label: "in errors", scale: "y2" },
            { metric: "if_out_errors_ps", ifindex: i.ifindex, label: "out errors", scale: "y2" },
          ]}
          format={fmtBps}
          format2={perSec}
          focus={focusKey === `if-${i.ifindex}`}
          {...common}
        />
      ))}
    </div>
  );
}

function Graph({
  id,
  gid,
  title,
  lines,
  range,
  format,
  format2,
  focus,
  onZoom,
}: {
  id: string;
  gid: string;
  title: string;
  lines: Line[];
  range: Range;
  format: (v: number) => string;
  format2?: (v: number) => string;
  focus: boolean;
  onZoom: (from: number, to: number) => void;
}) {
  const step = Math.max(1, Math.ceil((range.to - range.from) / 1000 / TARGET_POINTS));
  const key = lines.map((l) => `${l.metric}:${l.ifindex ?? ""}:${l.row ?? ""}`).join(",");
  const loaded = useLoad(
    () =>
      Promise.all(
        lines.map((l) =>
          unwrapped(
            api.GET("/api/v1/nodes/{id}/metrics/{metric}/history", {
              params: {
                path: { id, metric: l.metric },
                query: {
                  from: String(Math.floor(range.from / 1000)),
                  to: String(Math.ceil(range.to / 1000)),
                  step,
                  ...(l.ifindex !== undefined ? { ifindex: l.ifindex } : {}),
                  ...(l.row !== undefined ? { row: l.row } : {}),
                },
              },
            }),
          ),
        ),
      ),
    [id, range.from, range.to, key],
  );
  const data = useMemo(() => align((loaded.data ?? []).map((h) => h.points.map((p): [number, number] => [Date.parse(p.at), p.value]))), [loaded.data]);
  const chartSeries: ChartSeries[] = useMemo(() => lines.map((l, i) => ({ label: l.label, color: COLORS[i % COLORS.length], scale: l.scale })), [key]);
  if (!lines.length) return null;
  return (
    <section class={`card graph${focus ? " focus" : ""}`} id={`graph-${gid}`} aria-label={title} data-graph={gid}>
      <header>
        <h2>{title}</h2>
      </header>
      <ErrorNote error={loaded.error} />
      {loaded.data ? (
        <TimeChart
          label={`${title} over time`}
          series={chartSeries}
          data={data}
          format={format}
          format2={format2}
          onZoom={onZoom}
          testId={`chart-${gid}`}
          xRange={[range.from, range.to]}
        />
      ) : (
        <p class="muted">Loading…</p>
      )}
    </section>
  );
}
