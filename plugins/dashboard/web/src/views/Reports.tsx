// Reports (run a definition, follow the run, download its files), analysis findings (keyset paged), and flows over a
// time range with a drill-down from a conversation to the exporters that saw it and their interfaces.
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, can, unwrapped, useLoad } from "../session.tsx";
import { Badge, ErrorNote, fmtBytes, fmtTime, Section } from "../ui.tsx";

type Run = Schemas["RunView"];
type Finding = Schemas["FindingView"];
type Conversation = Schemas["FlowConversation"];
type Exporter = Schemas["FlowExporter"];

const TABS: [string, string][] = [
  ["", "Reports"],
  ["findings", "Findings"],
  ["flows", "Flows by range"],
];

export function ReportsView({ tab }: { tab: string }) {
  const current = TABS.some(([t]) => t === tab) ? tab : "";
  return (
    <div class="console-reports">
      <nav class="tabs" aria-label="Reports, findings and flows">
        {TABS.map(([t, label]) => (
          <a key={t} href={`#/reports${t ? `/${t}` : ""}`} aria-current={current === t ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <div class="grid">{current === "findings" ? <Findings /> : current === "flows" ? <FlowRange /> : <Reports />}</div>
    </div>
  );
}

/** Saves a run's file: fetched with the session's token (a plain link would carry none), then handed to the browser. */
async function download(run: Run, format: "html" | "csv" | "pdf"): Promise<void> {
  const { data, response } = await api.GET("/api/v1/reports/runs/{id}/{format}", { params: { path: { id: run.id, format } }, parseAs: "blob" });
  if (!response.ok || !data) throw new Error(`The download failed (${response.status}).`);
  const url = URL.createObjectURL(data as Blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `report-${run.definition_name.replace(/[^A-Za-z0-9_-]+/g, "-")}-${run.id.slice(0, 8)}.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function RunRow({ run, onError }: { run: Run; onError: (m: string) => void }) {
  const done = run.status === "succeeded";
  return (
    <tr data-run={run.id} data-status={run.status}>
      <td>{run.definition_name}</td>
      <td>
        <Badge value={run.status} />
        {run.status === "queued" || run.status === "running" ? <progress aria-label={`Run of ${run.definition_name} ${run.status}`} /> : null}
        {run.error ? <span class="error"> {run.error}</span> : null}
      </td>
      <td>
        {fmtTime(run.range_from)} – {fmtTime(run.range_to)}
      </td>
      <td>{fmtTime(run.finished_at ?? run.created_at)}</td>
      <td>
        {done
          ? run.outputs.map((o) => (
              <button
                key={o.format}
                type="button"
                class="small"
                onClick={() => void download(run, o.format as "html").catch((e: Error) => onError(e.message))}
                aria-label={`Download ${o.format.toUpperCase()} of ${run.definition_name}`}
              >
                {o.format.toUpperCase()} <span class="muted">{fmtBytes(o.bytes)}</span>
              </button>
            ))
          : "–"}
      </td>
    </tr>
  );
}

function Reports() {
  const defs = useLoad(() => unwrapped(api.GET("/api/v1/reports/definitions", { params: { query: { limit: 200 } as never } })), []);
  const runs = useLoad(() => unwrapped(api.GET("/api/v1/reports/runs", { params: { query: { limit: 20 } as never } })), []);
  const [watching, setWatching] = useState<Run | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The run just started is followed until it ends (a second's poll: runs take seconds).
  useEffect(() => {
    if (!watching || watching.status === "succeeded" || watching.status === "failed") return;
    const t = setTimeout(() => {
      unwrapped(api.GET("/api/v1/reports/runs/{id}", { params: { path: { id: watching.id } } })).then(
        (r) => {
          setWatching(r);
          if (r.status === "succeeded" || r.status === "failed") runs.reload();
        },
        (e: Error) => setError(e.message),
      );
    }, 1000);
    return () => clearTimeout(t);
  }, [watching]);
  const run = async (id: string) => {
    setError(null);
    try {
      const { id: runId } = await unwrapped(api.POST("/api/v1/reports/definitions/{id}/run", { params: { path: { id } }, body: {} }));
      setWatching(await unwrapped(api.GET("/api/v1/reports/runs/{id}", { params: { path: { id: runId } } })));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <>
      <Section title="Report definitions">
        <ErrorNote error={defs.error} />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="table-wrap">
          <table data-testid="report-definitions">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Sections</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {(defs.data ?? []).map((d) => (
                <tr key={d.id} data-definition={d.id}>
                  <td>{d.name}</td>
                  <td>{((d.spec.sections as { kind: string }[] | undefined) ?? []).map((s) => s.kind).join(", ")}</td>
                  <td>
                    {can("ManageConfig") ? (
                      <button type="button" class="small" onClick={() => void run(d.id)} aria-label={`Run ${d.name}`}>
                        Run now
                      </button>
                    ) : (
                      <span class="muted">–</span>
                    )}
                  </td>
                </tr>
              ))}
              {defs.data && !defs.data.length ? (
                <tr>
                  <td colSpan={3} class="muted">
                    No report definitions.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      </Section>
      {watching ? (
        <Section title="This run">
          <div role="status" aria-live="polite" data-testid="run-progress">
            Run of {watching.definition_name}: <strong>{watching.status}</strong>
          </div>
          <table>
            <tbody>
              <RunRow run={watching} onError={setError} />
            </tbody>
          </table>
        </Section>
      ) : null}
      <Section title="Recent runs">
        <ErrorNote error={runs.error} />
        <div class="table-wrap">
          <table data-testid="report-runs">
            <thead>
              <tr>
                <th scope="col">Report</th>
                <th scope="col">Status</th>
                <th scope="col">Range</th>
                <th scope="col">Finished</th>
                <th scope="col">Download</th>
              </tr>
            </thead>
            <tbody>
              {(runs.data ?? []).map((r) => (
                <RunRow key={r.id} run={r} onError={setError} />
              ))}
            </tbody>
          </table>
        </div>
      </Section>
    </>
  );
}

const PAGE = 50;

function Findings() {
  const [pages, setPages] = useState<Finding[][]>([]);
  const [severity, setSeverity] = useState("");
  const [more, setMore] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const load = async (after: Finding | null, reset: boolean) => {
    setError(null);
    try {
      const query = { limit: PAGE, ...(severity ? { severity } : {}), ...(after ? { before: after.at, before_id: after.id } : {}) };
      const rows = await unwrapped(api.GET("/api/v1/analysis/findings", { params: { query } }));
      setPages((p) => (reset ? [rows] : [...p, rows]));
      setMore(rows.length === PAGE);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  useEffect(() => void load(null, true), [severity]);
  const all = pages.flat();
  return (
    <Section title="Analysis findings">
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Finding filters">
        <label>
          Severity{" "}
          <select value={severity} onChange={(e) => setSeverity((e.target as HTMLSelectElement).value)}>
            <option value="">all</option>
            <option value="critical">critical</option>
            <option value="warning">warning</option>
            <option value="info">info</option>
          </select>
        </label>
      </form>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="table-wrap">
        <table data-testid="findings">
          <thead>
            <tr>
              <th scope="col">Found</th>
              <th scope="col">Tool</th>
              <th scope="col">Severity</th>
              <th scope="col">Subject</th>
              <th scope="col">Finding</th>
            </tr>
          </thead>
          <tbody>
            {all.map((f) => (
              <tr key={f.id} data-finding={f.id}>
                <td>{fmtTime(f.at)}</td>
                <td>{f.tool}</td>
                <td>
                  <Badge value={f.severity} />
                </td>
                <td>{f.node_id ? <a href={`#/node/${f.node_id}`}>{f.subject.name}</a> : f.subject.name}</td>
                <td>{f.message}</td>
              </tr>
            ))}
            {pages.length && !all.length ? (
              <tr>
                <td colSpan={5} class="muted">
                  No findings.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      {more && all.length ? (
        <button type="button" class="small" onClick={() => void load(all[all.length - 1], false)}>
          Older findings
        </button>
      ) : null}
    </Section>
  );
}

const FLOW_PRESETS: Record<string, number> = { "1h": 3600, "6h": 6 * 3600, "24h": 86400, "7d": 7 * 86400 };
const localInput = (t: number) => new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

function FlowRange() {
  const [range, setRange] = useState(() => ({ from: Date.now() - 3600_000, to: Date.now() }));
  const [draft, setDraft] = useState({ from: localInput(range.from), to: localInput(range.to) });
  const [picked, setPicked] = useState<Conversation | null>(null);
  const secs = { from: String(Math.floor(range.from / 1000)), to: String(Math.ceil(range.to / 1000)) };
  const conv = useLoad(() => unwrapped(api.GET("/api/v1/flow/conversations", { params: { query: { ...secs, limit: 50 } as never } })), [range.from, range.to]);
  const preset = (p: string) => {
    const to = Date.now();
    const r = { from: to - FLOW_PRESETS[p] * 1000, to };
    setRange(r);
    setDraft({ from: localInput(r.from), to: localInput(r.to) });
  };
  return (
    <>
      <Section title="Flow conversations">
        <div class="range-bar" role="group" aria-label="Flow range">
          {Object.keys(FLOW_PRESETS).map((p) => (
            <button key={p} type="button" class="small" onClick={() => preset(p)}>
              {p}
            </button>
          ))}
          <form
            class="custom-range"
            aria-label="Flow custom range"
            onSubmit={(e) => {
              e.preventDefault();
              const from = new Date(draft.from).getTime();
              const to = new Date(draft.to).getTime();
              if (Number.isFinite(from) && Number.isFinite(to) && from < to) setRange({ from, to });
            }}
          >
            <label>
              From <input type="datetime-local" value={draft.from} onInput={(e) => setDraft({ ...draft, from: (e.target as HTMLInputElement).value })} />
            </label>
            <label>
              To <input type="datetime-local" value={draft.to} onInput={(e) => setDraft({ ...draft, to: (e.target as HTMLInputElement).value })} />
            </label>
            <button type="submit" class="small">
              Apply
            </button>
          </form>
        </div>
        <p class="muted" data-testid="flow-range">
          {new Date(range.from).toLocaleString()} – {new Date(range.to).toLocaleString()}
        </p>
        <ErrorNote error={conv.error} />
        <div class="table-wrap">
          <table data-testid="flow-conversations">
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col">Destination</th>
                <th scope="col">Bytes</th>
                <th scope="col">Packets</th>
                <th scope="col">Drill down</th>
              </tr>
            </thead>
            <tbody>
              {((conv.data ?? []) as Conversation[]).map((c) => (
                <tr key={`${c.src}>${c.dst}`}>
                  <td>
                    {c.src} <span class="muted">AS{c.src_asn}</span>
                  </td>
                  <td>
                    {c.dst} <span class="muted">AS{c.dst_asn}</span>
                  </td>
                  <td class="num">{fmtBytes(c.bytes)}</td>
                  <td class="num">{c.packets}</td>
                  <td>
                    <button type="button" class="small" onClick={() => setPicked(c)} aria-label={`Exporters of ${c.src} to ${c.dst}`}>
                      Exporters
                    </button>
                  </td>
                </tr>
              ))}
              {conv.data && !conv.data.length ? (
                <tr>
                  <td colSpan={5} class="muted">
                    No flows in this range.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      </Section>
      {picked ? <ConversationExporters conv={picked} secs={secs} /> : null}
    </>
  );
}

/** Which exporters saw a conversation (one filtered query per exporter), each linking to its node's interface graphs. */
function ConversationExporters({ conv, secs }: { conv: Conversation; secs: { from: string; to: string } }) {
  const seen = useLoad(async () => {
    const exporters = (await unwrapped(api.GET("/api/v1/flow/exporters"))) as Exporter[];
    const per = await Promise.all(
      exporters.slice(0, 50).map(async (e) => {
        const rows = (await unwrapped(
          api.GET("/api/v1/flow/conversations", { params: { query: { ...secs, peer: conv.src, exporter: e.address, limit: 1000 } as never } }),
        )) as Conversation[];
        const hit = rows.find((r) => r.src === conv.src && r.dst === conv.dst);
        return hit ? { exporter: e, bytes: hit.bytes, packets: hit.packets } : null;
      }),
    );
    return per.filter((p): p is NonNullable<typeof p> => p !== null);
  }, [conv.src, conv.dst, secs.from, secs.to]);
  return (
    <Section title={`Exporters of ${conv.src} → ${conv.dst}`}>
      <ErrorNote error={seen.error} />
      <ul data-testid="conversation-exporters">
        {(seen.data ?? []).map(({ exporter: e, bytes, packets }) => (
          <li key={e.address}>
            <strong>{e.node_name ?? e.address}</strong> <span class="muted">{e.address}</span> — {fmtBytes(bytes)}, {packets} packets{" "}
            {e.node_id ? (
              <>
                · <a href={`#/node/${e.node_id}`}>node</a> · <a href={`#/node/${e.node_id}/graphs?from=${secs.from}&to=${secs.to}`}>interface graphs</a>
              </>
            ) : null}
          </li>
        ))}
        {seen.data && !seen.data.length ? <li class="muted">No exporter in your scope saw it.</li> : null}
      </ul>
      <p class="muted">The flow rollups keep the exporter, not the input and output interfaces: its interface graphs show the same range.</p>
    </Section>
  );
}
