import { Inject, Injectable } from "@tsed/di";
import { canonicalIp } from "../../../core/index.js";
import type { AttributedNode, NodeAddresses } from "../contract.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** The published directory view (contract.ts). */
const NODE_DIRECTORY_VIEW = "inventory.node_directory";

/**
 * Address → node, for plugins that attribute what a device sends (syslog, traps, flow exports) to the
 * node standing at the sender's address. Kept in memory (receivers look up every message), re-read when
 * a node or folder changes here (coalesced) and every addressBookRefreshMs (changes made on another
 * replica). Two nodes at one address: the one in the receiving poller's pool when a pool is given, else the first by name.
 * Started with the plugin (full mode).
 */
@Injectable()
export class NodeAddressBook implements NodeAddresses {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  private byAddress = new Map<string, AttributedNode>();
  private byId = new Map<string, AttributedNode>();
  private byPool = new Map<string, Map<string, AttributedNode>>();
  private timer: NodeJS.Timeout | null = null;
  private reloadTimer: NodeJS.Timeout | null = null;
  private off: (() => void)[] = [];
  private loading: Promise<void> | null = null;
  private reloaded = new Set<() => void>();

  async start(): Promise<void> {
    if (this.timer) return;
    await this.reload();
    const soon = () => this.reloadSoon();
    const bus = this.ctx.bus;
    this.off = [
      bus.on("inventory.node.created", soon),
      bus.on("inventory.node.updated", soon),
      bus.on("inventory.node.deleted", soon),
      bus.on("inventory.folder.updated", soon),
      bus.on("inventory.folder.deleted", soon),
    ];
    this.timer = setInterval(() => void this.reload(), this.ctx.config.addressBookRefreshMs);
    this.timer.unref();
  }

  stop(): void {
    for (const off of this.off) off();
    this.off = [];
    if (this.timer) clearInterval(this.timer);
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    this.timer = this.reloadTimer = null;
  }

  /**
   * The node at `address`. With `pool` (the pool of the poller, or the core, that received the message), a node of
   * that pool comes first, so two sites reusing one private address each keep their own; else the first by name.
   */
  byIp(address: string, pool?: string): AttributedNode | null {
    if (pool !== undefined) {
      const own = this.byPool.get(pool)?.get(address);
      if (own) return own;
    }
    return this.byAddress.get(address) ?? null;
  }

  node(id: string): AttributedNode | null {
    return this.byId.get(id.toLowerCase()) ?? null;
  }

  /**
   * Every address with the node byIp(address, pool) gives: for a receiver that attributes elsewhere (a worker thread
   * holds a copy). Re-read it when onReload calls back.
   */
  entries(pool: string): [string, AttributedNode][] {
    const out = new Map(this.byAddress);
    for (const [address, node] of this.byPool.get(pool) ?? []) out.set(address, node);
    return [...out];
  }

  /** Calls `fn` after every read of the directory (it may or may not have changed); returns the unsubscribe. */
  onReload(fn: () => void): () => void {
    this.reloaded.add(fn);
    return () => this.reloaded.delete(fn);
  }

  /** Re-reads the directory now (tests and the bus handler); concurrent calls share one read. */
  reload(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private reloadSoon(): void {
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.reload();
    }, 200);
    this.reloadTimer.unref();
  }

  private async load(): Promise<void> {
    try {
      const { rows } = await this.ctx.store.query<{ id: string; name: string; address: string; folder_path: string[]; pool: string }>(
        `SELECT id, name, host(address) AS address, folder_path::text[] AS folder_path, effective_pool AS pool FROM ${NODE_DIRECTORY_VIEW} ORDER BY name, id`,
      );
      const byAddress = new Map<string, AttributedNode>();
      const byId = new Map<string, AttributedNode>();
      const byPool = new Map<string, Map<string, AttributedNode>>();
      for (const r of rows) {
        const node = { id: r.id, name: r.name, folder_path: r.folder_path, pool: r.pool };
        byId.set(r.id, node);
        const key = canonicalIp(r.address);
        if (!byAddress.has(key)) byAddress.set(key, node);
        let inPool = byPool.get(r.pool);
        if (!inPool) byPool.set(r.pool, (inPool = new Map()));
        if (!inPool.has(key)) inPool.set(key, node);
      }
      this.byAddress = byAddress;
      this.byId = byId;
      this.byPool = byPool;
      for (const fn of this.reloaded) fn();
    } catch (err) {
      this.ctx.log.warn("node address book not read: it keeps the previous map", { error: err });
    }
  }
}
