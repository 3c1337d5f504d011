/**
 * Upstream paths: a breadth-first search over the live links from each pool's seed node (where its poller sits) gives
 * every node of that pool the neighbour it is reached through; a pinned parent replaces the inferred one. Pure and
 * linear in nodes + links per pool, so the bench times it without a database.
 */

export interface UpstreamNode {
  id: string;
  pool: string;
}

export interface UpstreamEntry {
  parent: string | null;
  /** pin: a person set the parent; link: inferred from the links; seed: the pool's seed (no parent); null: not reached. */
  via: "pin" | "link" | "seed" | null;
}

export interface UpstreamGraph {
  entries: Map<string, UpstreamEntry>;
  /** Each pool's search tree (node → the node it was reached from), across pools' nodes: a path follows its own pool's tree. */
  trees: Map<string, Map<string, string | null>>;
  poolOf: Map<string, string>;
  pins: ReadonlyMap<string, string>;
  /** The seed each pool used (configured, else its node with most links; null when it has none). */
  seeds: Map<string, string | null>;
}

/** The node of `members` with most links (ties: the lowest id), or null when none has a link. */
function busiest(members: readonly string[], adjacency: Map<string, string[]>): string | null {
  let best: string | null = null;
  let degree = 0;
  for (const id of members) {
    const d = adjacency.get(id)?.length ?? 0;
    if (d > degree || (d === degree && d > 0 && best !== null && id < best)) {
      best = id;
      degree = d;
    }
  }
  return best;
}

export function computeUpstream(
  nodes: readonly UpstreamNode[],
  links: readonly (readonly [string, string])[],
  configuredSeeds: Readonly<Record<string, string>>,
  pins: ReadonlyMap<string, string>,
): UpstreamGraph {
  const adjacency = new Map<string, string[]>();
  const add = (a: string, b: string) => {
    const list = adjacency.get(a);
    if (list) list.push(b);
    else adjacency.set(a, [b]);
  };
  for (const [a, b] of links) {
    if (a === b) continue;
    add(a, b);
    add(b, a);
  }
  for (const list of adjacency.values()) list.sort();

  const pools = new Map<string, string[]>();
  for (const n of nodes) {
    const list = pools.get(n.pool);
    if (list) list.push(n.id);
    else pools.set(n.pool, [n.id]);
  }
  const known = new Set(nodes.map((n) => n.id));

  const entries = new Map<string, UpstreamEntry>();
  const trees = new Map<string, Map<string, string | null>>();
  const seeds = new Map<string, string | null>();
  for (const [pool, members] of pools) {
    const configured = configuredSeeds[pool];
    const seed = configured && known.has(configured) ? configured : busiest(members, adjacency);
    seeds.set(pool, seed);
    const parent = new Map<string, string | null>();
    if (seed) {
      // The search crosses other pools' nodes (a path may run through them) but only this pool's nodes keep its answer.
      parent.set(seed, null);
      const queue = [seed];
      for (let i = 0; i < queue.length; i++) {
        const at = queue[i];
        for (const next of adjacency.get(at) ?? []) {
          if (parent.has(next)) continue;
          parent.set(next, at);
          queue.push(next);
        }
      }
    }
    trees.set(pool, parent);
    for (const id of members) {
      if (!parent.has(id)) entries.set(id, { parent: null, via: null });
      else if (id === seed) entries.set(id, { parent: null, via: "seed" });
      else entries.set(id, { parent: parent.get(id) ?? null, via: "link" });
    }
  }
  const kept = new Map<string, string>();
  for (const [child, parent] of pins) {
    if (!known.has(child) || !known.has(parent)) continue;
    entries.set(child, { parent, via: "pin" });
    kept.set(child, parent);
  }
  return { entries, seeds, trees, poolOf: new Map(nodes.map((n) => [n.id, n.pool])), pins: kept };
}

/**
 * The upstream path of `id`: its parent first, up to the top. Each step takes a pin where there is one, else the
 * search tree of `id`'s pool (a node of another pool on the way is passed towards this pool's seed, not its own).
 * Stops before a node repeats (pins can make a loop).
 */
export function pathOf(g: UpstreamGraph, id: string): string[] {
  const tree = g.trees.get(g.poolOf.get(id) ?? "");
  const step = (at: string) => g.pins.get(at) ?? (tree?.has(at) ? (tree.get(at) ?? null) : (g.entries.get(at)?.parent ?? null));
  const path: string[] = [];
  const seen = new Set([id]);
  let at = step(id);
  while (at && !seen.has(at)) {
    path.push(at);
    seen.add(at);
    at = step(at);
  }
  return path;
}

/** Whether pinning `parent` above `child` would make `child` its own ancestor. */
export function wouldLoop(g: UpstreamGraph, child: string, parent: string): boolean {
  return parent === child || pathOf(g, parent).includes(child);
}
