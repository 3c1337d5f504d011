import { Inject, Injectable } from "@tsed/di";
import { canonicalIp, notFound, type Scope, scopeCovers } from "../../../core/index.js";
import { Credentials, NodeAddresses, type RevealedCredential } from "../../inventory/contract.js";
import { TOPOLOGY_CONTEXT, type TopologyContext } from "../context.js";
import type { TopologyLinkEvent } from "../contract.js";
import { parseWalk, type Observation, type WalkedNode } from "../lib/mibs.js";
import { Resolver } from "../lib/resolve.js";
import { walkNeighbors, WalkError, type WalkSettings } from "../lib/walker.js";
import { type DirectoryRow, type LinkChange, type ResolvedObservation, TopologyRepository } from "../repositories/TopologyRepository.js";
import { UpstreamService } from "./UpstreamService.js";

/** What one discovery run did. */
export interface DiscoverySummary {
  /** Nodes it was asked to walk (those with a credential). */
  nodes: number;
  walked: number;
  failed: number;
  /** Links the walked nodes reported (resolved to nodes here). */
  links: number;
  /** Neighbours the walked nodes reported that resolve to no node here. */
  unknown: number;
  /** Links that appeared (or came back), and links marked gone. */
  up: number;
  gone: number;
}

/** Reads one node's neighbour tables; tests and the bench replace it to seed the input. */
export type NodeWalker = (node: DirectoryRow, cred: RevealedCredential, settings: WalkSettings) => Promise<WalkedNode>;

const snmpWalker: NodeWalker = async (node, cred, settings) => parseWalk(await walkNeighbors(node.address, node.snmp_port, cred, settings));

/**
 * Link discovery: walks the nodes' LLDP and CDP tables, resolves each neighbour to a node here (or keeps it as an
 * unknown neighbour), stores the links with both ends and marks the ones not seen for goneAfterPolls polls gone.
 */
@Injectable()
export class DiscoveryService {
  @Inject(TOPOLOGY_CONTEXT)
  private ctx: TopologyContext;

  @Inject(TopologyRepository)
  private repo: TopologyRepository;

  @Inject(Credentials)
  private credentials: Credentials;

  @Inject(NodeAddresses)
  private addresses: NodeAddresses;

  @Inject(UpstreamService)
  private upstream: UpstreamService;

  walker: NodeWalker = snmpWalker;

  private settings(): WalkSettings {
    const c = this.ctx.config;
    return { timeoutMs: c.timeoutMs, retries: c.retries, maxRepetitions: c.maxRepetitions, maxVarbinds: c.maxVarbinds };
  }

  /** The scheduled run: the nodes whose last walk is older than intervalSecs, at most batchSize. */
  async runDue(): Promise<DiscoverySummary> {
    const ids = await this.repo.dueNodes(this.ctx.config.intervalSecs, this.ctx.config.batchSize);
    if (ids.length === 0) return { nodes: 0, walked: 0, failed: 0, links: 0, unknown: 0, up: 0, gone: 0 };
    return this.discover(ids, "All");
  }

  /** Queues a run over every node `scope` covers (job topology.discover-all); returns how many nodes with a credential it will walk. */
  async queueAll(scope: Scope): Promise<number> {
    const n = (await this.repo.directory()).filter((d) => d.walkable && scopeCovers(scope, d.folder_path)).length;
    await this.ctx.jobs.now("discover-all", { scope });
    return n;
  }

  /** Walks the nodes named (null: every node `scope` covers) that have a credential, now. 404 for a named node outside the scope. */
  async discover(ids: string[] | null, scope: Scope): Promise<DiscoverySummary> {
    const directory = await this.repo.directory();
    const byId = new Map(directory.map((n) => [n.id, n]));
    if (ids) for (const id of ids) if (!byId.has(id) || !scopeCovers(scope, byId.get(id)!.folder_path)) throw notFound("No such node.");
    const targets = (ids ? ids.map((id) => byId.get(id)!) : directory.filter((n) => scopeCovers(scope, n.folder_path))).filter((n) => n.walkable);

    const walked = new Map<string, WalkedNode>();
    let failed = 0;
    const settings = this.settings();
    const queue = [...targets];
    const worker = async () => {
      for (let node = queue.shift(); node; node = queue.shift()) {
        try {
          const cred = await this.credentials.reveal(node.credential_id!);
          if (!cred) throw new WalkError("no_credential", "the node's credential is gone");
          walked.set(node.id, await this.walker(node, cred, settings));
        } catch (err) {
          failed++;
          const kind = err instanceof WalkError ? err.kind : "error";
          // The reason, never the credential: WalkError messages name no secret.
          this.ctx.log.warn("topology: walk failed", { node: node.id, kind, error: (err as Error).message });
          await this.repo.recordFailure(node.id, kind);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.ctx.config.concurrency, Math.max(1, targets.length)) }, worker));
    const summary = await this.apply(walked, directory);
    return { ...summary, nodes: targets.length, failed };
  }

  /**
   * Stores what the walked nodes reported (the second half of a run; the bench seeds it directly). Every walked node's
   * own identity is learnt before any neighbour is resolved, so the order of the walks does not matter.
   */
  async apply(walked: Map<string, WalkedNode>, directory?: DirectoryRow[]): Promise<DiscoverySummary> {
    const dir = directory ?? (await this.repo.directory());
    const byId = new Map(dir.map((n) => [n.id, n]));
    const resolver = new Resolver(dir, await this.repo.identities(), (ip) => this.addresses.byIp(canonicalIp(ip))?.id ?? null);
    for (const [id, w] of walked) resolver.learn(id, w.chassisKey, w.sysName);

    const summary: DiscoverySummary = { nodes: walked.size, walked: walked.size, failed: 0, links: 0, unknown: 0, up: 0, gone: 0 };
    const goneAfter = this.ctx.config.goneAfterPolls;
    for (const [nodeId, w] of walked) {
      const resolved: ResolvedObservation[] = [];
      const unknown: Observation[] = [];
      for (const obs of w.observations) {
        const r = resolver.resolve(obs);
        if (r && r.nodeId !== nodeId) resolved.push({ observer: nodeId, remote: r.nodeId, by: r.by, obs });
        else if (!r) unknown.push(obs);
      }
      const changes = await this.repo.applyPoll(nodeId, w, resolved, unknown, goneAfter);
      summary.links += changes.links;
      summary.unknown += changes.unknown;
      summary.up += changes.up.length;
      summary.gone += changes.gone.length;
      this.announce(changes.up, changes.gone, byId);
    }
    summary.up += await this.promote(resolver, byId);
    if (summary.up + summary.gone > 0) this.upstream.invalidate();
    return summary;
  }

  /** Unknown neighbours that resolve now (an import, a node that announced itself) become links. Returns how many. */
  async promote(resolver?: Resolver, byId?: Map<string, DirectoryRow>): Promise<number> {
    const dir = byId ? null : await this.repo.directory();
    const nodes = byId ?? new Map(dir!.map((n) => [n.id, n]));
    const r = resolver ?? new Resolver([...nodes.values()], await this.repo.identities(), (ip) => this.addresses.byIp(canonicalIp(ip))?.id ?? null);
    const promoted: (ResolvedObservation & { unknownId: string })[] = [];
    for (const u of await this.repo.liveUnknown()) {
      const obs: Observation = {
        protocol: u.protocol,
        localPortKey: u.local_port_key,
        localIfindex: u.local_ifindex,
        localPort: u.local_port,
        remoteKey: u.remote_key,
        chassisId: u.chassis_id,
        sysName: u.sys_name,
        portKey: u.port_key,
        port: u.port,
        mgmtAddresses: u.mgmt_addresses,
        platform: u.platform,
      };
      const hit = r.resolve(obs);
      if (hit && hit.nodeId !== u.node_id) promoted.push({ observer: u.node_id, remote: hit.nodeId, by: hit.by, obs, unknownId: u.id });
    }
    const up = await this.repo.promoteUnknown(promoted);
    this.announce(up, [], nodes);
    if (up.length > 0) this.upstream.invalidate();
    return up.length;
  }

  /** Bus events and the live channel topology.changes (to sockets whose scope covers both ends). */
  private announce(up: LinkChange[], gone: LinkChange[], byId: Map<string, DirectoryRow>): void {
    const send = (event: "up" | "gone", l: LinkChange) => {
      const payload: TopologyLinkEvent = { id: l.id, a_node: l.a_node, a_port: l.a_port, b_node: l.b_node, b_port: l.b_port, protocols: l.protocols };
      void this.ctx.bus.emit(`topology.link.${event}`, payload);
      const a = byId.get(l.a_node)?.folder_path ?? [];
      const b = new Set(byId.get(l.b_node)?.folder_path ?? []);
      this.ctx.realtime.publish("changes", `link.${event}`, payload, { folders: a.filter((f) => b.has(f)) });
    };
    for (const l of up) send("up", l);
    for (const l of gone) send("gone", l);
  }
}
