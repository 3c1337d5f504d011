// Inventory pieces other views use: agent health (badge, node panel, overview list) and the node editor.
import { createContext } from "preact";
import { useContext, useEffect, useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../clients/typescript/src/index.ts";
import { Picker } from "./pickers.tsx";
import { api, can, sessionState, throttled, unwrapped, useLive, useLoad } from "./session.tsx";
import { ErrorNote, fmtTime, Section } from "./ui.tsx";

export type AgentHealth = Schemas["AgentHealthView"];
type NodeView = Schemas["NodeView"];

/** Agent health refreshes this often besides on alert transitions (the data age moves on). */
const HEALTH_REFRESH_MS = 15_000;

/** What a person reads for an agent status. */
export function agentText(status: AgentHealth["agent_status"]): string {
  switch (status) {
    case "answering":
      return "agent answering";
    case "timeout":
      return "agent not answering (timing out)";
    case "auth":
      return "agent refusing credentials";
    case "error":
      return "agent error";
    default:
      return "no SNMP";
  }
}

export const agentDown = (h: AgentHealth | undefined | null) => Boolean(h && h.agent_status && h.agent_status !== "answering");

export function fmtAge(secs: number | null | undefined): string {
  if (secs === null || secs === undefined) return "no data";
  if (secs < 90) return `${secs} s`;
  if (secs < 5400) return `${Math.round(secs / 60)} min`;
  if (secs < 172_800) return `${Math.round(secs / 3600)} h`;
  return `${Math.round(secs / 86400)} d`;
}

/** Re-runs `reload` on alert transitions (throttled) and every HEALTH_REFRESH_MS. */
function useHealthRefresh(reload: () => void, deps: unknown[]) {
  const again = useMemo(() => throttled(reload, 500), deps);
  useLive(["alerts.fired", "alerts.resolved", "alerts.node.state"], () => again(), deps);
  useEffect(() => {
    const t = setInterval(again, HEALTH_REFRESH_MS);
    return () => clearInterval(t);
  }, deps);
}

/** Every visible node's health by id (one page of up to 1000; the tree and the overview read it). */
export function useAgentHealth(): Map<string, AgentHealth> {
  const signedIn = sessionState().signedIn;
  const health = useLoad(
    () => (signedIn ? unwrapped(api.GET("/api/v1/agent-health", { params: { query: { limit: 1000 } } })) : Promise.resolve([] as AgentHealth[])),
    [signedIn],
  );
  useHealthRefresh(health.reload, [signedIn]);
  return useMemo(() => new Map((health.data ?? []).map((h) => [h.node_id, h])), [health.data]);
}

/** A small mark beside a node whose agent does not answer or that is unreachable; nothing when all is well. */
export function AgentMark({ health }: { health: AgentHealth | undefined }) {
  if (!health) return null;
  if (health.reachable === false)
    return (
      <span class="chip sev-unreachable agent-mark" data-testid="agent-mark">
        unreachable
      </span>
    );
  if (!agentDown(health)) return null;
  return (
    <span class="chip sev-warning agent-mark" data-testid="agent-mark" title={`last answer ${fmtTime(health.last_answer_at)}`}>
      {agentText(health.agent_status)}
    </span>
  );
}

/** The health of the nodes a view lists (the folder tree provides it once for all its rows). */
export const HealthContext = createContext<Map<string, AgentHealth>>(new Map());

export function AgentMarkFor({ id }: { id: string }) {
  return <AgentMark health={useContext(HealthContext).get(id)} />;
}

/** A folder's name as a link to its page. */
export function FolderLink({ id }: { id: string }) {
  const f = useLoad(() => unwrapped(api.GET("/api/v1/node-groups/{id}", { params: { path: { id } } })), [id]);
  return <a href={`#/folder/${id}`}>{f.data?.name ?? "…"}</a>;
}

/** The node view's health panel: reachability, agent status, last successful poll, data age. */
export function AgentHealthPanel({ id }: { id: string }) {
  const h = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}/agent-health", { params: { path: { id } } })), [id]);
  useHealthRefresh(h.reload, [id]);
  const v = h.data;
  return (
    <Section title="Health">
      <ErrorNote error={h.error} />
      {v ? (
        <dl class="facts" data-testid="agent-health">
          <dt>Reachability</dt>
          <dd data-testid="reachability">
            {v.reachable === null ? "not polled yet" : v.reachable ? `reachable${v.rtt_ms !== null ? ` (${v.rtt_ms.toFixed(1)} ms)` : ""}` : "unreachable"}
          </dd>
          <dt>SNMP agent</dt>
          <dd data-testid="agent-status" class={agentDown(v) ? "agent-down" : undefined}>
            {agentText(v.agent_status)}
            {v.agent_status_at ? <span class="muted"> at {fmtTime(v.agent_status_at)}</span> : null}
          </dd>
          <dt>Last successful poll</dt>
          <dd data-testid="last-answer">{v.agent_status === null ? "–" : v.last_answer_at ? fmtTime(v.last_answer_at) : "never"}</dd>
          <dt>Data age</dt>
          <dd data-testid="data-age">{fmtAge(v.data_age_secs)}</dd>
        </dl>
      ) : null}
    </Section>
  );
}

/** Nodes whose latest poll found them unreachable or their agent not answering (the overview's list). */
export function AgentProblems() {
  const signedIn = sessionState().signedIn;
  const list = useLoad(
    () =>
      signedIn ? unwrapped(api.GET("/api/v1/agent-health", { params: { query: { problems: "true", limit: 200 } } })) : Promise.resolve([] as AgentHealth[]),
    [signedIn],
  );
  useHealthRefresh(list.reload, [signedIn]);
  if (!signedIn) return null;
  return (
    <Section title="Node health">
      <ErrorNote error={list.error} />
      <ul class="rows" data-testid="agent-problems">
        {(list.data ?? []).map((h) => (
          <li key={h.node_id} data-node={h.node_id}>
            <a href={`#/node/${h.node_id}`}>{h.node_name}</a> <AgentMark health={h} />{" "}
            <span class="muted">
              last answer {h.last_answer_at ? fmtTime(h.last_answer_at) : "never"}, data age {fmtAge(h.data_age_secs)}
            </span>
          </li>
        ))}
        {list.data && !list.data.length ? <li class="muted">Every polled node is reachable and its agent answering.</li> : null}
      </ul>
    </Section>
  );
}

const splitTags = (s: string) =>
  s
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);

/** The full NodeWrite of a node as stored (PUT /nodes/{id} replaces the whole document). */
export function nodeWriteOf(n: NodeView): Schemas["NodeWrite"] {
  return {
    name: n.name,
    address: n.address,
    credential_id: n.credential_id,
    model: n.model,
    parent_id: n.parent_id,
    pool: n.pool,
    profile_id: n.profile_id,
    vendor: n.vendor,
    group_id: n.group_id,
    snmp_port: n.snmp_port,
    notes: n.notes,
    tags: n.tags,
    tags_excluded: n.tags_excluded,
    profile_locked: n.profile_locked,
    sort_order: n.sort_order,
  };
}

/** Edit and delete a node: name, address, folder, pool, credential, tags. Only for ManageConfig. */
export function NodeEditor({ node, onSaved }: { node: NodeView; onSaved: () => void }) {
  const [open, setOpen] = useState(false);
  const [v, setV] = useState({ name: node.name, address: node.address, pool: node.pool ?? "", tags: node.tags.join(", "), port: String(node.snmp_port) });
  const [folder, setFolder] = useState<string | null>(node.group_id);
  const [cred, setCred] = useState<string | null>(node.credential_id);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  useEffect(() => {
    setV({ name: node.name, address: node.address, pool: node.pool ?? "", tags: node.tags.join(", "), port: String(node.snmp_port) });
    setFolder(node.group_id);
    setCred(node.credential_id);
  }, [node.id, node.updated_at]);
  if (!can("ManageConfig")) return null;
  const allScope = sessionState().identity?.scope === "All";
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      await unwrapped(
        api.PUT("/api/v1/nodes/{id}", {
          params: { path: { id: node.id } },
          body: {
            ...nodeWriteOf(node),
            name: v.name,
            address: v.address.trim(),
            pool: v.pool.trim() || null,
            tags: splitTags(v.tags),
            snmp_port: Number(v.port) || 161,
            group_id: folder,
            credential_id: cred,
          },
        }),
      );
      setSaved(true);
      onSaved();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await unwrapped(api.DELETE("/api/v1/nodes/{id}", { params: { path: { id: node.id } } }));
      location.hash = node.group_id ? `#/folder/${node.group_id}` : "#/folders";
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const set = (k: keyof typeof v) => (e: Event) => setV((s) => ({ ...s, [k]: (e.target as HTMLInputElement).value }));
  return (
    <div class="editor">
      <div class="actions">
        <button type="button" class="small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Close editor" : "Edit node"}
        </button>
        {confirmDelete ? (
          <>
            <button type="button" class="small danger" onClick={() => void remove()}>
              Really delete {node.name}
            </button>
            <button type="button" class="small" onClick={() => setConfirmDelete(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" class="small danger" onClick={() => setConfirmDelete(true)}>
            Delete node
          </button>
        )}
      </div>
      {open ? (
        <form class="form" onSubmit={save} aria-label="Edit node" data-testid="node-editor">
          <div class="field">
            <label for="ne-name">Name</label>
            <input id="ne-name" value={v.name} onInput={set("name")} required />
          </div>
          <div class="field">
            <label for="ne-address">Address</label>
            <input id="ne-address" value={v.address} onInput={set("address")} required />
          </div>
          <div class="field">
            <label for="ne-port">SNMP port</label>
            <input id="ne-port" inputMode="numeric" value={v.port} onInput={set("port")} />
          </div>
          <div class="field">
            <label for="ne-folder">Folder</label>
            <Picker id="ne-folder" kind="folder" label="Folder" value={folder} onChange={(id) => setFolder(id)} />
          </div>
          <div class="field">
            <label for="ne-pool">Pool</label>
            <input id="ne-pool" value={v.pool} placeholder="inherit from the folder" onInput={set("pool")} />
          </div>
          {allScope ? (
            <div class="field">
              <label for="ne-cred">Credential</label>
              <Picker id="ne-cred" kind="credential" label="Credential" value={cred} onChange={(id) => setCred(id)} />
            </div>
          ) : null}
          <div class="field">
            <label for="ne-tags">Tags</label>
            <input id="ne-tags" value={v.tags} placeholder="comma separated" onInput={set("tags")} />
          </div>
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          <div class="actions">
            <button type="submit">Save node</button>
            {saved ? (
              <span class="ok" role="status">
                Saved.
              </span>
            ) : null}
          </div>
        </form>
      ) : error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
