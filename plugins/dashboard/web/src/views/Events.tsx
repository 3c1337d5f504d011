import { useEffect, useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { LazyTimeChart } from "../lazy.tsx";
import { Picker } from "../pickers.tsx";
import { api, can, realtime, unwrapped, useLive, useLoad } from "../session.tsx";
import { ErrorNote, Section } from "../ui.tsx";
import { EventTable } from "./EventTable.tsx";
import { TrapNames } from "./TrapNames.tsx";

type Event = Schemas["EventView"];
const MAX_ROWS = 200;
const RANGES: Record<string, number> = { "1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400 };
const KIND_COLORS: Record<string, string> = { syslog: "#3b82f6", trap: "#f59e0b", flow: "#10b981" };
/** Bars per chart the bucket width aims at (at least 60 s, the stats' own floor). */
const TARGET_BARS = 120;

export function Events() {
  const [kind, setKind] = useState("");
  const [severity, setSeverity] = useState("");
  const [nodeId, setNodeId] = useState<string | null>(null);
  const [q, setQ] = useState("");
  const [qDraft, setQDraft] = useState("");
  const [span, setSpan] = useState("1h");
  const [rows, setRows] = useState<Event[]>([]);
  const [paused, setPaused] = useState(false);
  const [liveError, setLiveError] = useState<string | null>(null);
  const query = { ...(kind ? { kind } : {}), ...(severity ? { severity } : {}), ...(nodeId ? { node_id: nodeId } : {}), ...(q ? { q } : {}) };
  const initial = useLoad(() => unwrapped(api.GET("/api/v1/events", { params: { query: { ...query, limit: 50 } as never } })), [kind, severity, nodeId, q]);
  const trapNames = useLoad(() => unwrapped(api.GET("/api/v1/events/trap-names")), []);
  const [statsTick, setStatsTick] = useState(0);
  // The chart's range: fixed when the range is picked or refreshed, so the axis spans it even where no event fell.
  const statsRange = useMemo(() => {
    const end = Date.now();
    return { start: end - RANGES[span] * 1000, end };
  }, [span, statsTick]);
  const stats = useLoad(() => {
    const { start, end } = statsRange;
    const bucket = Math.max(60, Math.ceil(RANGES[span] / TARGET_BARS / 60) * 60);
    return unwrapped(
      api.GET("/api/v1/events/stats", {
        params: { query: { ...query, group_by: "time", split: "kind", start: String(start), end: String(end), bucket_secs: String(bucket) } as never },
      }),
    ) as unknown as Promise<Schemas["StatsBucket"][]>;
  }, [kind, severity, nodeId, q, statsRange]);
  useEffect(() => setRows((initial.data ?? []) as Event[]), [initial.data]);

  // The live tail: the service filters for this socket (events.live with {kind, node_id, severity}); a text search
  // shows the list as searched, without the tail (the live filter has no text condition).
  useEffect(() => {
    const live = realtime();
    if (!live || q) return;
    setLiveError(null);
    const filter: { kind?: "syslog" | "trap"; node_id?: string; severity?: number[] } = {};
    if (kind) filter.kind = kind as "syslog" | "trap";
    if (nodeId) filter.node_id = nodeId;
    if (severity) filter.severity = severity.split(",").map(Number);
    live.subscribe("events.live", filter).catch((e: Error) => setLiveError(e.message));
    return () => void live.unsubscribe("events.live");
  }, [kind, severity, nodeId, q]);
  useLive(
    ["events.events"],
    (batch) => {
      if (!paused && !q) setRows((r) => [...(batch as Event[]).slice().reverse(), ...r].slice(0, MAX_ROWS));
    },
    [paused, q],
  );

  // Stacked bars: each kind's series is the running sum up to it, drawn from the total down so each shows its part.
  const chart = useMemo(() => {
    const buckets = stats.data ?? [];
    const kinds = [...new Set(buckets.flatMap((b) => Object.keys((b.by_kind as Record<string, number> | null) ?? {})))].sort();
    const xs = buckets.map((b) => b.ts_unix_ms ?? 0);
    const sums = kinds.map((_, i) =>
      buckets.map((b) => kinds.slice(0, i + 1).reduce((n, k) => n + ((b.by_kind as Record<string, number> | null)?.[k] ?? 0), 0)),
    );
    const order = kinds.map((_, i) => i).reverse();
    return {
      series: order.map((i) => ({ label: kinds.slice(0, i + 1).join(" + "), color: KIND_COLORS[kinds[i]] ?? "#9ca3af", bars: true })),
      data: [xs, ...order.map((i) => sums[i])],
    };
  }, [stats.data]);
  return (
    <div class="grid">
      <Section
        title={`Events over time, by kind (last ${span})`}
        actions={
          <label>
            Range{" "}
            <select value={span} onChange={(e) => setSpan((e.target as HTMLSelectElement).value)}>
              {Object.keys(RANGES).map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>{" "}
            <button type="button" class="small" onClick={() => setStatsTick((n) => n + 1)}>
              Refresh
            </button>
          </label>
        }
      >
        <ErrorNote error={stats.error} />
        <LazyTimeChart
          label="Events over time split by kind"
          series={chart.series}
          data={chart.data}
          format={(v: number) => String(Math.round(v))}
          testId="events-chart"
          xRange={[statsRange.start, statsRange.end]}
        />
      </Section>
      <Section
        title="Live tail"
        actions={
          <button type="button" class="small" aria-pressed={paused} onClick={() => setPaused(!paused)}>
            {paused ? "Resume" : "Pause"}
          </button>
        }
      >
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setQ(qDraft.trim());
          }}
          aria-label="Event filters"
        >
          <label>
            Search events{" "}
            <input
              type="search"
              value={qDraft}
              placeholder="text in message, host, trap OID"
              onInput={(e) => setQDraft((e.target as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="small">
            Search
          </button>
          <label>
            Kind{" "}
            <select value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
              <option value="">all</option>
              <option value="syslog">syslog</option>
              <option value="trap">trap</option>
            </select>
          </label>
          <label>
            Severity{" "}
            <select value={severity} onChange={(e) => setSeverity((e.target as HTMLSelectElement).value)}>
              <option value="">all</option>
              <option value="0,1,2,3">errors and worse (0–3)</option>
              <option value="4">warning (4)</option>
              <option value="5,6,7">notice, info, debug</option>
            </select>
          </label>
          <Picker id="events-node" kind="node" label="Node" value={nodeId} onChange={(id) => setNodeId(id)} />
        </form>
        {q ? <p class="muted">Searching for “{q}”: the live tail is off while a search is set.</p> : null}
        <ErrorNote error={initial.error} />
        {liveError ? (
          <p class="error" role="alert">
            {liveError}
          </p>
        ) : null}
        <div aria-live="polite">
          <EventTable events={rows} trapNames={(trapNames.data ?? []) as Schemas["TrapNameView"][]} />
        </div>
      </Section>
      {can("ManageConfig") || trapNames.data ? <TrapNames rows={(trapNames.data ?? []) as Schemas["TrapNameView"][]} onChanged={trapNames.reload} /> : null}
    </div>
  );
}
