import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, realtime, unwrapped, useLive, useLoad } from "../session.tsx";
import { ErrorNote, Section, StackedBars } from "../ui.tsx";
import { EventList } from "./Node.tsx";

type Event = Schemas["EventView"];
const MAX_ROWS = 200;

export function Events() {
  const [kind, setKind] = useState("");
  const [severity, setSeverity] = useState("");
  const [nodeId, setNodeId] = useState("");
  const [rows, setRows] = useState<Event[]>([]);
  const [paused, setPaused] = useState(false);
  const [liveError, setLiveError] = useState<string | null>(null);
  const query = { ...(kind ? { kind } : {}), ...(severity ? { severity } : {}), ...(nodeId ? { node_id: nodeId } : {}) };
  const initial = useLoad(() => unwrapped(api.GET("/api/v1/events", { params: { query: { ...query, limit: 50 } as never } })), [kind, severity, nodeId]);
  const stats = useLoad(
    () =>
      unwrapped(api.GET("/api/v1/events/stats", { params: { query: { ...query, group_by: "time", split: "kind" } as never } })) as unknown as Promise<
        Schemas["StatsBucket"][]
      >,
    [kind, severity, nodeId],
  );
  useEffect(() => setRows((initial.data ?? []) as Event[]), [initial.data]);

  // The live tail: the service filters for this socket (events.live with {kind, node_id, severity}).
  useEffect(() => {
    const live = realtime();
    if (!live) return;
    setLiveError(null);
    const filter: { kind?: "syslog" | "trap"; node_id?: string; severity?: number[] } = {};
    if (kind) filter.kind = kind as "syslog" | "trap";
    if (nodeId) filter.node_id = nodeId;
    if (severity) filter.severity = severity.split(",").map(Number);
    live.subscribe("events.live", filter).catch((e: Error) => setLiveError(e.message));
    return () => void live.unsubscribe("events.live");
  }, [kind, severity, nodeId]);
  useLive(
    ["events.events"],
    (batch) => {
      if (!paused) setRows((r) => [...(batch as Event[]).slice().reverse(), ...r].slice(0, MAX_ROWS));
    },
    [paused],
  );

  const buckets = (stats.data ?? []).map((b) => ({ t: b.ts_unix_ms ?? 0, parts: (b.by_kind as Record<string, number> | null) ?? { all: b.count } }));
  return (
    <div class="grid">
      <Section title="Events per bucket, by kind (last hour)">
        <ErrorNote error={stats.error} />
        <StackedBars buckets={buckets} label="Events over time split by kind" />
      </Section>
      <Section
        title="Live tail"
        actions={
          <button type="button" class="small" aria-pressed={paused} onClick={() => setPaused(!paused)}>
            {paused ? "Resume" : "Pause"}
          </button>
        }
      >
        <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Event filters">
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
          <label>
            Node id <input value={nodeId} onChange={(e) => setNodeId((e.target as HTMLInputElement).value.trim())} placeholder="uuid" />
          </label>
        </form>
        <ErrorNote error={initial.error} />
        {liveError ? (
          <p class="error" role="alert">
            {liveError}
          </p>
        ) : null}
        <div aria-live="polite">
          <EventList events={rows} />
        </div>
      </Section>
    </div>
  );
}
