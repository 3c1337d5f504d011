// Interface top-N, flows, pollers and sweeps.
import { useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import type { SweepProgressEvent } from "../../../../../clients/typescript/src/realtime.ts";
import { api, throttled, unwrapped, useLive, useLoad } from "../session.tsx";
import { ErrorNote, fmtBps, fmtBytes, fmtPct, fmtTime, ProgressBar, Section } from "../ui.tsx";

const METRICS = ["throughput", "in_bps", "out_bps", "errors", "discards"] as const;
const AGGS: Record<string, string> = {
  latest: "latest",
  avg_15m: "average, 15 min",
  max_15m: "maximum, 15 min",
  avg_1h: "average, 1 h",
  max_1h: "maximum, 1 h",
};

export function TopN() {
  const [metric, setMetric] = useState<(typeof METRICS)[number]>("throughput");
  const [agg, setAgg] = useState("latest");
  const [limit, setLimit] = useState(10);
  const top = useLoad(
    () => unwrapped(api.GET("/api/v1/metrics/interface-top", { params: { query: { metric, agg: agg as "latest", limit } } })),
    [metric, agg, limit],
  );
  const entries = top.data?.entries ?? [];
  const max = Math.max(1, ...entries.map((e) => e.value));
  const isRate = metric === "throughput" || metric.endsWith("bps");
  return (
    <Section title="Interface top-N">
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Top-N options">
        <label>
          Metric{" "}
          <select value={metric} onChange={(e) => setMetric((e.target as HTMLSelectElement).value as (typeof METRICS)[number])}>
            {METRICS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          Window{" "}
          <select value={agg} onChange={(e) => setAgg((e.target as HTMLSelectElement).value)}>
            {Object.entries(AGGS).map(([k, v]) => (
              <option key={k} value={k}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <label>
          Show{" "}
          <select value={String(limit)} onChange={(e) => setLimit(Number((e.target as HTMLSelectElement).value))}>
            {[10, 25, 50].map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNote error={top.error} />
      {top.data?.partial ? <p class="muted">Some entries are hidden by your folder scope.</p> : null}
      <ol class="bars" data-testid="top-n">
        {entries.map((e) => (
          <li key={`${e.node_id}:${e.ifindex}`}>
            <span class="bar-label">
              <a href={`#/node/${e.node_id}`}>{e.node_name}</a> {e.if_name ?? `#${e.ifindex}`}
            </span>
            <span class="bar" style={{ width: `${(100 * e.value) / max}%` }} />
            <span class="num">{isRate ? fmtBps(e.value) : e.value.toFixed(2)}</span>
          </li>
        ))}
        {top.data && !entries.length ? <li class="muted">No interface has samples yet.</li> : null}
      </ol>
    </Section>
  );
}

export function Flows() {
  const conv = useLoad(() => unwrapped(api.GET("/api/v1/flow/conversations", { params: { query: { limit: 25 } as never } })), []);
  const topAs = useLoad(() => unwrapped(api.GET("/api/v1/flow/top-as", { params: { query: { limit: 25 } as never } })), []);
  return (
    <div class="grid">
      <Section title="Top conversations (last hour)">
        <ErrorNote error={conv.error} />
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col">Destination</th>
                <th scope="col">Bytes</th>
                <th scope="col">Packets</th>
              </tr>
            </thead>
            <tbody>
              {((conv.data ?? []) as Schemas["FlowConversation"][]).map((c, i) => (
                <tr key={i}>
                  <td>
                    {c.src} <span class="muted">AS{c.src_asn}</span>
                  </td>
                  <td>
                    {c.dst} <span class="muted">AS{c.dst_asn}</span>
                  </td>
                  <td class="num">{fmtBytes(c.bytes)}</td>
                  <td class="num">{c.packets}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      <Section title="Top AS">
        <ErrorNote error={topAs.error} />
        <ol>
          {((topAs.data ?? []) as Schemas["TopAs"][]).map((a) => (
            <li key={a.asn}>
              AS{a.asn} {a.name ?? ""} — {fmtBytes(a.bytes)}
            </li>
          ))}
        </ol>
      </Section>
    </div>
  );
}

export function Pollers() {
  const hosts = useLoad(() => unwrapped(api.GET("/api/v1/system/hosts")), []);
  const gaps = useLoad(() => unwrapped(api.GET("/api/v1/monitoring-gaps")), []);
  return (
    <div class="grid">
      <Section title="Hosts (core and pollers)">
        <ErrorNote error={hosts.error} />
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Instance</th>
                <th scope="col">Role</th>
                <th scope="col">Pool</th>
                <th scope="col">Online</th>
                <th scope="col">CPU</th>
                <th scope="col">Memory</th>
                <th scope="col">Disk</th>
                <th scope="col">Load</th>
              </tr>
            </thead>
            <tbody>
              {(hosts.data?.hosts ?? []).map((h) => (
                <tr key={h.instance}>
                  <td>{h.instance}</td>
                  <td>{h.role}</td>
                  <td>{h.pool ?? "–"}</td>
                  <td>{h.online ? "yes" : "no"}</td>
                  <td class="num">{fmtPct(h.cpu_pct)}</td>
                  <td class="num">{fmtPct(h.mem_used_pct)}</td>
                  <td class="num">{fmtPct(h.disk_used_pct)}</td>
                  <td class="num">{h.load1?.toFixed(2) ?? "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      <Section title="Monitoring gaps">
        <ErrorNote error={gaps.error} />
        <ul>
          {(gaps.data ?? []).map((g) => (
            <li key={g.id}>
              pool {g.pool}: {fmtTime(g.started_at)} → {fmtTime(g.ended_at)} ({g.duration_secs} s)
              {g.listeners.length ? `, listeners ${g.listeners.join(", ")}` : ""}
            </li>
          ))}
          {gaps.data && !gaps.data.length ? <li class="muted">No gaps recorded.</li> : null}
        </ul>
      </Section>
    </div>
  );
}

export function Sweeps() {
  const sweeps = useLoad(() => unwrapped(api.GET("/api/v1/discovery/sweeps", { params: { query: { limit: 50 } } })), []);
  const [progress, setProgress] = useState<Record<string, SweepProgressEvent>>({});
  const reload = useMemo(() => throttled(() => sweeps.reload(), 1000), []);
  useLive(["polling.sweep.progress"], (p) => {
    const e = p as SweepProgressEvent;
    setProgress((s) => ({ ...s, [e.id]: e }));
    if (e.status !== "running") reload();
  });
  return (
    <Section title="Discovery sweeps">
      <ErrorNote error={sweeps.error} />
      <ul class="sweeps">
        {(sweeps.data ?? []).map((s) => {
          const p = progress[s.id] ?? s;
          return (
            <li key={s.id}>
              <strong>{s.cidr}</strong> {p.status} — {p.probed}/{p.total} probed, {p.found} found
              <ProgressBar value={p.probed} max={p.total} label={`Sweep ${s.cidr} progress`} />
            </li>
          );
        })}
        {sweeps.data && !sweeps.data.length ? <li class="muted">No sweeps.</li> : null}
      </ul>
    </Section>
  );
}
