import { useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, sessionState, throttled, unwrapped, useLive, useLoad } from "../session.tsx";
import { Badge, ErrorNote, Section } from "../ui.tsx";
import { AgentMarkFor, HealthContext, useAgentHealth } from "../inventory.tsx";

type Folder = Schemas["FolderTreeNode"];
type Node = Schemas["NodeView"];
const RANK: Record<string, number> = { ok: 0, info: 1, warning: 2, critical: 3, unreachable: 4 };

/** A node's state as the dashboard shows it: live alerts.node.state when seen, else its worst active alert, else ok. */
export function useNodeStates() {
  const alerts = useLoad(() => unwrapped(api.GET("/api/v1/alerts")), []);
  const [live, setLive] = useState<Record<string, string>>({});
  const reload = useMemo(() => throttled(() => alerts.reload()), []);
  useLive(["alerts.node.state"], (c) => setLive((s) => ({ ...s, [(c as { node_id: string }).node_id]: (c as { state: string }).state })));
  useLive(["alerts.fired", "alerts.resolved"], () => reload());
  const worst: Record<string, string> = {};
  for (const a of alerts.data ?? []) {
    if (!a.node) continue;
    const s = a.state === "unreachable" ? "unreachable" : a.severity;
    if ((RANK[s] ?? 0) > (RANK[worst[a.node]] ?? -1)) worst[a.node] = s;
  }
  return (id: string) => live[id] ?? worst[id] ?? "ok";
}

export function Folders() {
  const tree = useLoad(() => unwrapped(api.GET("/api/v1/node-groups/tree")), []);
  const nodes = useLoad(() => unwrapped(api.GET("/api/v1/nodes", { params: { query: { limit: 1000 } } })), []);
  const stateOf = useNodeStates();
  const health = useAgentHealth();
  const reload = useMemo(
    () =>
      throttled(() => {
        tree.reload();
        nodes.reload();
      }),
    [],
  );
  useLive(
    [
      "inventory.node.created",
      "inventory.node.deleted",
      "inventory.node.updated",
      "inventory.folder.created",
      "inventory.folder.deleted",
      "inventory.folder.updated",
    ],
    () => reload(),
  );
  const byFolder = new Map<string | null, Node[]>();
  for (const n of nodes.data ?? []) byFolder.set(n.group_id, [...(byFolder.get(n.group_id) ?? []), n]);
  const rootNodes = byFolder.get(null) ?? [];
  return (
    <HealthContext.Provider value={health}>
      <Section title="Folders">
        <ErrorNote error={tree.error ?? nodes.error} />
        <ul class="tree" role="tree" aria-label="Folders and nodes">
          {(tree.data ?? []).map((f) => (
            <FolderItem key={f.id} folder={f} byFolder={byFolder} stateOf={stateOf} onPin={tree.reload} />
          ))}
          {rootNodes.length ? (
            <li role="treeitem" aria-expanded="true">
              <span class="folder-name">(no folder)</span>
              <NodeList nodes={rootNodes} stateOf={stateOf} />
            </li>
          ) : null}
        </ul>
      </Section>
    </HealthContext.Provider>
  );
}

function NodeList({ nodes, stateOf }: { nodes: Node[]; stateOf: (id: string) => string }) {
  return (
    <ul role="group">
      {nodes.map((n) => (
        <li key={n.id} role="treeitem" class="node-item" data-node={n.id}>
          <Badge value={stateOf(n.id)} /> <a href={`#/node/${n.id}`}>{n.name}</a> <span class="muted">{n.address}</span> <AgentMarkFor id={n.id} />
        </li>
      ))}
    </ul>
  );
}

function FolderItem({
  folder,
  byFolder,
  stateOf,
  onPin,
}: {
  folder: Folder;
  byFolder: Map<string | null, Node[]>;
  stateOf: (id: string) => string;
  onPin: () => void;
}) {
  const [open, setOpen] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const nodes = byFolder.get(folder.id) ?? [];
  const counts: Record<string, number> = {};
  for (const n of nodes) counts[stateOf(n.id)] = (counts[stateOf(n.id)] ?? 0) + 1;
  const pin = async () => {
    setError(null);
    try {
      if (folder.pinned) await unwrapped(api.DELETE("/api/v1/pins/groups/{group_id}", { params: { path: { group_id: folder.id } } }));
      else await unwrapped(api.PUT("/api/v1/pins/groups/{group_id}", { params: { path: { group_id: folder.id } } }));
      onPin();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <li role="treeitem" aria-expanded={open} data-folder={folder.id}>
      <button type="button" class="link" onClick={() => setOpen(!open)} aria-label={`${open ? "Collapse" : "Expand"} ${folder.name}`}>
        {open ? "▾" : "▸"}
      </button>{" "}
      <a class="folder-name" href={`#/folder/${folder.id}`}>
        {folder.name}
      </a>{" "}
      <span class="muted">({folder.total_node_count} nodes)</span>{" "}
      {Object.entries(counts).map(([s, n]) => (
        <span key={s} class={`chip sev-${s}`}>
          {n} {s}
        </span>
      ))}
      {sessionState().identity?.kind === "session" ? (
        <button type="button" class="small" onClick={() => void pin()} aria-pressed={folder.pinned}>
          {folder.pinned ? "Unpin" : "Pin"}
        </button>
      ) : null}
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
      {open ? (
        <>
          {folder.children.length ? (
            <ul role="group">
              {folder.children.map((c) => (
                <FolderItem key={c.id} folder={c} byFolder={byFolder} stateOf={stateOf} onPin={onPin} />
              ))}
            </ul>
          ) : null}
          <NodeList nodes={nodes} stateOf={stateOf} />
        </>
      ) : null}
    </li>
  );
}
