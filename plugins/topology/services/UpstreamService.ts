import { Inject, Injectable } from "@tsed/di";
import { assertNodeInScope, badRequest, canonicalIp, isUuid, type Scope, scopeCovers } from "../../../core/index.js";
import { TOPOLOGY_CONTEXT, type TopologyContext } from "../context.js";
import { Upstream } from "../contract.js";
import { computeUpstream, pathOf, wouldLoop, type UpstreamGraph } from "../lib/upstream.js";
import { type DirectoryRow, TopologyRepository } from "../repositories/TopologyRepository.js";

interface Computed extends UpstreamGraph {
  at: number;
  nodes: Map<string, DirectoryRow>;
}

/** A node's upstream as answered over HTTP: its parent, how it was decided, and the path to its pool's seed. */
export interface UpstreamAnswer {
  node_id: string;
  pool: string;
  parent_id: string | null;
  via: "pin" | "link" | "seed" | "none";
  seed_id: string | null;
  path: { node_id: string; name: string }[];
  truncated: boolean;
}

/**
 * Each node's upstream (the Upstream contract token): computed from the live links, the pools' seeds and the pins,
 * kept for upstreamTtlSecs and computed again at once after a change on this replica (new or gone links, a pin).
 */
@Injectable()
export class UpstreamService implements Upstream {
  @Inject(TOPOLOGY_CONTEXT)
  private ctx: TopologyContext;

  @Inject(TopologyRepository)
  private repo: TopologyRepository;

  private computed: Computed | null = null;
  private computing: Promise<Computed> | null = null;
  private generation = 0;

  invalidate(): void {
    this.generation++;
    this.computed = null;
  }

  private async graph(): Promise<Computed> {
    const ttlMs = this.ctx.config.upstreamTtlSecs * 1000;
    if (this.computed && Date.now() - this.computed.at < ttlMs) return this.computed;
    if (!this.computing) {
      const generation = this.generation;
      this.computing = this.compute()
        .then((c) => {
          // A change during the computation leaves it out: keep nothing, the next call computes again.
          if (generation === this.generation) this.computed = c;
          return c;
        })
        .finally(() => {
          this.computing = null;
        });
    }
    return this.computing;
  }

  private async compute(): Promise<Computed> {
    const [dir, edges, pins] = await Promise.all([this.repo.directory(), this.repo.liveEdges(), this.repo.pins()]);
    // A seed is named by node id or by address (operators know where the poller sits by address).
    const byAddress = new Map(dir.map((n) => [canonicalIp(n.address), n.id]));
    const seeds: Record<string, string> = {};
    for (const [pool, v] of Object.entries(this.ctx.config.seeds as Record<string, string>)) {
      const id = isUuid(v) ? v : byAddress.get(canonicalIp(v));
      if (id) seeds[pool] = id;
    }
    const graph = computeUpstream(
      dir.map((n) => ({ id: n.id, pool: n.effective_pool })),
      edges,
      seeds,
      pins,
    );
    return { ...graph, at: Date.now(), nodes: new Map(dir.map((n) => [n.id, n])) };
  }

  async parentOf(nodeId: string): Promise<string | null> {
    return (await this.graph()).entries.get(nodeId)?.parent ?? null;
  }

  async pathOf(nodeId: string): Promise<string[]> {
    return pathOf(await this.graph(), nodeId);
  }

  /** GET /nodes/{id}/upstream: the path stops before the first node the caller's scope does not cover (truncated). */
  async view(nodeId: string, scope: Scope): Promise<UpstreamAnswer> {
    const g = await this.graph();
    const node = g.nodes.get(nodeId);
    assertNodeInScope(scope, node?.folder_path);
    const entry = g.entries.get(nodeId);
    const path: UpstreamAnswer["path"] = [];
    let truncated = false;
    for (const id of pathOf(g, nodeId)) {
      const n = g.nodes.get(id);
      if (!n || !scopeCovers(scope, n.folder_path)) {
        truncated = true;
        break;
      }
      path.push({ node_id: id, name: n.name });
    }
    const seed = g.seeds.get(node!.effective_pool) ?? null;
    return {
      node_id: nodeId,
      pool: node!.effective_pool,
      parent_id: path.length > 0 ? path[0].node_id : null,
      via: entry?.via ?? "none",
      seed_id: seed && scopeCovers(scope, g.nodes.get(seed)?.folder_path ?? []) ? seed : null,
      path,
      truncated,
    };
  }

  /** PUT /nodes/{id}/parent: both nodes in scope; a pin that would make the node its own ancestor is refused. */
  async pin(nodeId: string, parentId: string, scope: Scope, by: string): Promise<UpstreamAnswer> {
    const g = await this.compute();
    assertNodeInScope(scope, g.nodes.get(nodeId)?.folder_path);
    const parent = g.nodes.get(parentId);
    if (!parent || !scopeCovers(scope, parent.folder_path)) throw badRequest("unknown_reference", "parent_id names no node you can see.");
    if (wouldLoop(g, nodeId, parentId)) throw badRequest("parent_loop", "That parent depends on this node already (its upstream path runs through it).");
    await this.repo.pin(nodeId, parentId, by);
    this.invalidate();
    return this.view(nodeId, scope);
  }

  /** DELETE /nodes/{id}/parent: the inferred parent applies again (idempotent). */
  async unpin(nodeId: string, scope: Scope): Promise<UpstreamAnswer> {
    const dir = await this.repo.directory([nodeId]);
    assertNodeInScope(scope, dir[0]?.folder_path);
    await this.repo.unpin(nodeId);
    this.invalidate();
    return this.view(nodeId, scope);
  }
}
