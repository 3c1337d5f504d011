// The topology map: the nodes of a folder (or of every visible folder) and the LLDP/CDP links between them, laid out by
// d3-force, nodes coloured by state, links by the utilisation of their busier end, gone links dashed, and a root cause
// ringed: an unreachable node whose upstream parent is not unreachable (the device that broke, not those behind it).
// Live: a link that appears or goes (topology.changes) and a node that changes state (alerts.active) redraw it.
import { forceCenter, forceCollide, forceLink, forceManyBody, forceSimulation, type SimulationLinkDatum, type SimulationNodeDatum } from "d3-force";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { Picker } from "../pickers.tsx";
import { api, realtime, throttled, unwrapped, useLive, useLoad } from "../session.tsx";
import { ErrorNote, Section } from "../ui.tsx";
import { useNodeStates } from "./Folders.tsx";

type Link = Schemas["TopologyLinkView"];
type Node = Schemas["NodeView"];
type Iface = Schemas["NodeInterfaceView"];

/** The most nodes and links one map draws (a folder of a few hundred devices is readable; a whole network is not). */
const MAX_NODES = 500;
const MAX_LINKS = 2000;
const W = 900;
const H = 560;

interface MapNode extends SimulationNodeDatum {
  id: string;
  name: string;
}
interface MapLink extends SimulationLinkDatum<MapNode> {
  id: string;
  gone: boolean;
  util: number | null;
  label: string;
}

async function allLinks(): Promise<Link[]> {
  const out: Link[] = [];
  let cursor: string | undefined;
  do {
    const { data, error, response } = await api.GET("/api/v1/topology/links", { params: { query: { limit: 1000, cursor } } });
    if (!response.ok || !data) return unwrapped(Promise.resolve({ data, error, response }));
    out.push(...data);
    cursor = response.headers.get("X-Next-Cursor") ?? undefined;
  } while (cursor && out.length < MAX_LINKS);
  return out;
}

/** Utilisation (percent, the busier direction) of each (node, ifindex) the links use. */
async function utilisation(nodeIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await Promise.all(
    nodeIds.map(async (id) => {
      const rows: Iface[] = await unwrapped(api.GET("/api/v1/nodes/{id}/interfaces", { params: { path: { id } } })).catch(() => []);
      for (const r of rows) {
        const u = Math.max(r.util_in_pct ?? -1, r.util_out_pct ?? -1);
        if (u >= 0) out.set(`${id}:${r.ifindex}`, u);
      }
    }),
  );
  return out;
}

const STATE_COLOR: Record<string, string> = {
  ok: "#16a34a",
  info: "#0ea5e9",
  warning: "#d97706",
  critical: "#dc2626",
  unreachable: "#7f1d1d",
  unknown: "#6b7280",
  maintenance: "#7c3aed",
};
/** Green to red with utilisation; grey when no rate was measured. */
const utilColor = (u: number | null) => (u === null ? "#9ca3af" : u >= 80 ? "#dc2626" : u >= 50 ? "#d97706" : u >= 10 ? "#2563eb" : "#16a34a");

/** Positions by d3-force, started from the previous positions so a redraw does not move what did not change. */
function layout(nodes: MapNode[], links: MapLink[], previous: Map<string, { x: number; y: number }>) {
  for (const n of nodes) {
    const p = previous.get(n.id);
    if (p) Object.assign(n, p);
  }
  const sim = forceSimulation(nodes)
    .force(
      "link",
      forceLink<MapNode, MapLink>(links)
        .id((n) => n.id)
        .distance(100),
    )
    .force("charge", forceManyBody().strength(-380))
    .force("center", forceCenter(W / 2, H / 2))
    .force("collide", forceCollide(26))
    .stop();
  // Run it to rest here rather than animating: the map is read, not watched.
  sim.tick(previous.size ? 60 : 300);
  for (const n of nodes) {
    n.x = Math.max(30, Math.min(W - 30, n.x ?? W / 2));
    n.y = Math.max(24, Math.min(H - 30, n.y ?? H / 2));
  }
}

export function TopologyMap() {
  const [folder, setFolder] = useState<string | null>(null);
  const nodes = useLoad(() => unwrapped(api.GET("/api/v1/nodes", { params: { query: { limit: MAX_NODES, group_id: folder ?? undefined } } })), [folder]);
  const links = useLoad(allLinks, []);
  const stateOf = useNodeStates();
  const reload = useMemo(() => throttled(() => links.reload(), 500), []);
  useEffect(() => {
    void realtime()
      ?.subscribe("topology.changes")
      .catch(() => undefined);
    return () =>
      void realtime()
        ?.unsubscribe("topology.changes")
        .catch(() => undefined);
  }, []);
  useLive(["topology.link.up", "topology.link.gone"], () => reload());
  useLive(["inventory.node.created", "inventory.node.deleted", "inventory.node.updated"], () => nodes.reload());

  const inMap = useMemo(() => new Map((nodes.data ?? []).map((n: Node) => [n.id, n])), [nodes.data]);
  const shown = useMemo(() => (links.data ?? []).filter((l) => inMap.has(l.a.node_id) && inMap.has(l.b.node_id)), [links.data, inMap]);
  const ends = useMemo(() => [...new Set(shown.flatMap((l) => [l.a.node_id, l.b.node_id]))].sort(), [shown]);
  const util = useLoad(() => utilisation(ends), [ends.join(",")]);

  // Root causes: unreachable nodes whose parent (the upstream route's next hop) is not unreachable.
  const unreachable = [...inMap.keys()].filter((id) => stateOf(id) === "unreachable").sort();
  const parents = useLoad(
    () =>
      Promise.all(
        unreachable.map(async (id) => {
          const u = await unwrapped(api.GET("/api/v1/nodes/{id}/upstream", { params: { path: { id } } })).catch(() => null);
          return [id, u?.parent_id ?? null] as const;
        }),
      ),
    [unreachable.join(",")],
  );
  const rootCauses = new Set((parents.data ?? []).filter(([, p]) => !p || stateOf(p) !== "unreachable").map(([id]) => id));

  const positions = useRef(new Map<string, { x: number; y: number }>());
  const drawn = useMemo(() => {
    const mapNodes: MapNode[] = [...inMap.values()].map((n) => ({ id: n.id, name: n.name }));
    const mapLinks: MapLink[] = shown.map((l) => {
      const ua = util.data?.get(`${l.a.node_id}:${l.a.ifindex}`);
      const ub = util.data?.get(`${l.b.node_id}:${l.b.ifindex}`);
      const u = ua === undefined && ub === undefined ? null : Math.max(ua ?? 0, ub ?? 0);
      return {
        id: l.id,
        source: l.a.node_id,
        target: l.b.node_id,
        gone: l.state === "gone",
        util: u,
        label: `${l.a.node_name} ${l.a.port ?? "?"} ↔ ${l.b.node_name} ${l.b.port ?? "?"} (${l.protocols.join(", ")}${l.state === "gone" ? ", gone" : ""}${u === null ? "" : `, ${u.toFixed(1)} %`})`,
      };
    });
    layout(mapNodes, mapLinks, positions.current);
    positions.current = new Map(mapNodes.map((n) => [n.id, { x: n.x!, y: n.y! }]));
    return { mapNodes, mapLinks };
  }, [inMap, shown, util.data]);

  const up = shown.filter((l) => l.state === "up").length;
  return (
    <Section title="Topology map">
      <div class="toolbar">
        <label for="map-folder">Folder</label>
        <Picker id="map-folder" kind="folder" label="Folder" value={folder} onChange={(id) => setFolder(id)} />
        <span class="muted" data-testid="map-summary">
          {inMap.size} nodes, {up} links up, {shown.length - up} gone
          {inMap.size >= MAX_NODES ? ` (the first ${MAX_NODES} nodes)` : ""}
        </span>
      </div>
      <ErrorNote error={nodes.error ?? links.error} />
      {inMap.size && !shown.length && !links.loading ? <p class="muted">No links between these nodes yet (LLDP or CDP discovery finds them).</p> : null}
      <svg viewBox={`0 0 ${W} ${H}`} class="topology-map" role="img" aria-label="Topology map" data-testid="topology-map">
        {drawn.mapLinks.map((l) => {
          const s = l.source as MapNode;
          const t = l.target as MapNode;
          return (
            <line
              key={l.id}
              data-link={l.id}
              data-state={l.gone ? "gone" : "up"}
              x1={s.x}
              y1={s.y}
              x2={t.x}
              y2={t.y}
              stroke={l.gone ? "#9ca3af" : utilColor(l.util)}
              stroke-width={l.gone ? 1.5 : 3}
              stroke-dasharray={l.gone ? "6 4" : undefined}
            >
              <title>{l.label}</title>
            </line>
          );
        })}
        {drawn.mapNodes.map((n) => {
          const state = stateOf(n.id);
          const root = rootCauses.has(n.id);
          return (
            <a key={n.id} href={`#/node/${n.id}`} data-node={n.id} data-state={state} data-root-cause={root ? "true" : undefined}>
              <title>{`${n.name}: ${state}${root ? " (root cause)" : ""}`}</title>
              {root ? <circle cx={n.x} cy={n.y} r={17} fill="none" stroke="#dc2626" stroke-width="3" class="root-ring" /> : null}
              <circle cx={n.x} cy={n.y} r={11} fill={STATE_COLOR[state] ?? STATE_COLOR.unknown} stroke="var(--card)" stroke-width="2" />
              <text x={n.x} y={(n.y ?? 0) + 25} text-anchor="middle" class="map-label">
                {n.name}
              </text>
            </a>
          );
        })}
      </svg>
      <p class="legend-row muted">
        Nodes by state; links by the busier end's utilisation: <span style={{ color: utilColor(5) }}>under 10 %</span>,{" "}
        <span style={{ color: utilColor(20) }}>10–50 %</span>, <span style={{ color: utilColor(60) }}>50–80 %</span>,{" "}
        <span style={{ color: utilColor(90) }}>80 % and more</span>; dashed: gone; ringed red: root cause.
      </p>
    </Section>
  );
}
