/** The catch-all sources of the listener streams (migration 0001 makes them; they cannot be deleted). */
export const BUILTIN_SOURCES = {
  syslog: "5e7a0c1d-2b3f-4a6e-9c8d-000000000514",
  trap: "5e7a0c1d-2b3f-4a6e-9c8d-000000000162",
} as const;

/** What the pipeline keeps of a source. */
export interface SourceEntry {
  id: string | null;
  kind: string;
  node_id: string | null;
  enabled: boolean;
}

/** What a stored source row gives the cache. */
type SourceRow = Pick<SourceEntry, "kind" | "node_id" | "enabled"> & { id: string };

/**
 * The sources as the pipeline reads them for every message: a node's own sources by kind, then node id (no key is
 * built per message), and every source by id. load() replaces the whole set.
 */
export class SourceCache {
  private byNode = new Map<string, Map<string, SourceEntry>>();
  private byId = new Map<string, SourceEntry>();

  load(rows: readonly SourceRow[]): void {
    const byNode = new Map<string, Map<string, SourceEntry>>();
    const byId = new Map<string, SourceEntry>();
    for (const s of rows) {
      const entry: SourceEntry = { id: s.id, kind: s.kind, node_id: s.node_id, enabled: s.enabled };
      byId.set(s.id, entry);
      if (s.node_id && s.kind !== "http") {
        let ofKind = byNode.get(s.kind);
        if (!ofKind) byNode.set(s.kind, (ofKind = new Map()));
        ofKind.set(s.node_id, entry);
      }
    }
    this.byNode = byNode;
    this.byId = byId;
  }

  /** The source of a message of `kind` from `node`: the node's own, else the stream's built-in one. */
  sourceFor(kind: string, nodeId: string | null): SourceEntry {
    if (nodeId !== null) {
      const own = this.byNode.get(kind)?.get(nodeId);
      if (own) return own;
    }
    return this.byId.get(kind === "trap" ? BUILTIN_SOURCES.trap : BUILTIN_SOURCES.syslog) ?? { id: null, kind, node_id: null, enabled: true };
  }

  /** What the ingest workers get of the syslog sources: the nodes' own, and the built-in one. */
  syslog(): { byNode: [string, SourceEntry][]; builtin: SourceEntry } {
    const byNode = this.byNode.get("syslog") ?? new Map<string, SourceEntry>();
    const builtin = this.byId.get(BUILTIN_SOURCES.syslog) ?? { id: BUILTIN_SOURCES.syslog, kind: "syslog", node_id: null, enabled: true };
    return { byNode: [...byNode], builtin };
  }
}
