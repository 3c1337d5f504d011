import { useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, throttled, unwrapped, useLive, useLoad } from "../session.tsx";
import { Badge, ErrorNote, fmtBps, fmtPct, fmtTime, LineChart, Section } from "../ui.tsx";
import { AgentHealthPanel, CredentialName, FolderLink, NodeEditor, ProfileName } from "../inventory.tsx";
import { NodeAlertActions } from "../consoleLazy.tsx";

const WINDOWS: Record<string, number> = { "1h": 3600, "6h": 6 * 3600, "24h": 86400 };

export function NodeView({ id }: { id: string }) {
  const node = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } })), [id]);
  const ifaces = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}/interfaces", { params: { path: { id } } })), [id]);
  const alerts = useLoad(async () => (await unwrapped(api.GET("/api/v1/alerts"))).filter((a) => a.node === id), [id]);
  const history = useLoad(() => unwrapped(api.GET("/api/v1/alerts/history", { params: { query: { node_id: id, limit: 20 } } })), [id]);
  const events = useLoad(() => unwrapped(api.GET("/api/v1/events", { params: { query: { node_id: id, limit: 20 } as never } })), [id]);
  const reload = useMemo(
    () =>
      throttled(() => {
        alerts.reload();
        history.reload();
        ifaces.reload();
      }),
    [id],
  );
  useLive(
    ["alerts.fired", "alerts.resolved", "alerts.ack"],
    (p) => {
      if ((p as { node?: string | null }).node === id) reload();
    },
    [id],
  );
  const [ifindex, setIfindex] = useState<number | null>(null);
  const n = node.data;
  return (
    <div class="grid">
      <Section title={n ? `Node ${n.name}` : "Node"} actions={<a href={`#/node/${id}/graphs`}>Graphs</a>}>
        <ErrorNote error={node.error} />
        {n ? (
          <dl class="facts">
            <dt>Address</dt>
            <dd>{n.address}</dd>
            <dt>sysName</dt>
            <dd data-testid="sys-name">{n.sys_name ?? "–"}</dd>
            <dt>Description</dt>
            <dd>{n.sys_descr ?? "–"}</dd>
            <dt>Vendor / model</dt>
            <dd>{[n.vendor, n.model].filter(Boolean).join(" ") || "–"}</dd>
            <dt>Folder</dt>
            <dd data-testid="node-folder">{n.group_id ? <FolderLink id={n.group_id} /> : "(tree root)"}</dd>
            <dt>Profile</dt>
            <dd data-testid="node-profile">{n.profile_id ? <ProfileName id={n.profile_id} /> : "–"}</dd>
            <dt>Credential</dt>
            <dd data-testid="node-credential">{n.credential_id ? <CredentialName id={n.credential_id} /> : "none"}</dd>
            <dt>SNMP port</dt>
            <dd>{n.snmp_port}</dd>
            <dt>Pool</dt>
            <dd>{n.effective_pool}</dd>
            <dt>Tags</dt>
            <dd>{n.effective_tags.join(", ") || "–"}</dd>
          </dl>
        ) : null}
        {n ? <NodeEditor node={n} onSaved={node.reload} /> : null}
      </Section>
      <AgentHealthPanel id={id} />

      <NodeAlertActions id={id} />
      <Section title="Interfaces">
        <ErrorNote error={ifaces.error} />
        <div class="table-wrap">
          <table data-testid="interfaces">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">In</th>
                <th scope="col">Out</th>
                <th scope="col">Util in/out</th>
                <th scope="col">Chart</th>
              </tr>
            </thead>
            <tbody>
              {(ifaces.data ?? []).map((i) => (
                <tr key={i.ifindex} data-ifindex={i.ifindex}>
                  <td>{i.ifindex}</td>
                  <td>
                    {i.if_name ?? "–"} <span class="muted">{i.if_alias ?? ""}</span>
                  </td>
                  <td>{i.oper_up === null ? "–" : i.oper_up ? "up" : "down"}</td>
                  <td class="num">{fmtBps(i.in_bps)}</td>
                  <td class="num">{fmtBps(i.out_bps)}</td>
                  <td class="num">
                    {fmtPct(i.util_in_pct)} / {fmtPct(i.util_out_pct)}
                  </td>
                  <td>
                    <button
                      type="button"
                      class="small"
                      aria-pressed={ifindex === i.ifindex}
                      onClick={() => setIfindex(ifindex === i.ifindex ? null : i.ifindex)}
                    >
                      {ifindex === i.ifindex ? "Hide" : "Rates"}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {ifindex !== null ? <RateChart id={id} ifindex={ifindex} /> : null}
      </Section>
      <Section title="Active alerts">
        <ErrorNote error={alerts.error} />
        <ul>
          {(alerts.data ?? []).map((a) => (
            <li key={a.id}>
              <Badge value={a.severity} /> {a.title ?? a.metric} {a.acked ? <span class="muted">(acked)</span> : null}
            </li>
          ))}
          {alerts.data && !alerts.data.length ? <li class="muted">None.</li> : null}
        </ul>
      </Section>
      <Section title="Alert history">
        <ErrorNote error={history.error} />
        <ol class="transitions">
          {(history.data ?? []).map((h) => (
            <li key={h.id}>
              <Badge value={h.resolved ? "resolved" : h.severity} /> {h.title ?? h.metric} <time class="muted">{fmtTime(h.at_unix_ms)}</time>
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Recent events">
        <ErrorNote error={events.error} />
        <EventList events={(events.data ?? []) as Schemas["EventView"][]} />
      </Section>
    </div>
  );
}

function RateChart({ id, ifindex }: { id: string; ifindex: number }) {
  const [win, setWin] = useState("1h");
  const load = (metric: string) => () =>
    unwrapped(
      api.GET("/api/v1/nodes/{id}/metrics/{metric}/history", {
        params: { path: { id, metric }, query: { ifindex, from: String(Math.floor(Date.now() / 1000) - WINDOWS[win]) } },
      }),
    );
  const inb = useLoad(load("if_in_bps"), [id, ifindex, win]);
  const outb = useLoad(load("if_out_bps"), [id, ifindex, win]);
  const pts = (h: Schemas["MetricHistory"] | null) => (h?.points ?? []).map((p) => ({ t: Date.parse(p.at), v: p.value }));
  return (
    <div>
      <label>
        Window{" "}
        <select value={win} onChange={(e) => setWin((e.target as HTMLSelectElement).value)}>
          {Object.keys(WINDOWS).map((w) => (
            <option key={w}>{w}</option>
          ))}
        </select>
      </label>
      <ErrorNote error={inb.error ?? outb.error} />
      <LineChart
        label={`Interface ${ifindex} in and out bits per second`}
        format={fmtBps}
        series={[
          { name: "in", points: pts(inb.data), color: "#3b82f6" },
          { name: "out", points: pts(outb.data), color: "#10b981" },
        ]}
      />
    </div>
  );
}

export function EventList({ events }: { events: Schemas["EventView"][] }) {
  if (!events.length) return <p class="muted">No events.</p>;
  return (
    <div class="table-wrap">
      <table class="events">
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">Kind</th>
            <th scope="col">Sev</th>
            <th scope="col">Source</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id} data-event={e.id}>
              <td>
                <time>{fmtTime(e.received_at)}</time>
              </td>
              <td>{e.kind}</td>
              <td>{e.severity ?? "–"}</td>
              <td>{e.node_id ? <a href={`#/node/${e.node_id}`}>{e.node_name ?? e.host ?? e.source_ip}</a> : (e.source_ip ?? e.host ?? "–")}</td>
              <td class="msg">{e.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
