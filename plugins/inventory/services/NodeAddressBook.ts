import { Inject, Injectable } from "@tsed/di";
import { canonicalIp } from "../../../core/index.js";
import type { AttributedNode, NodeAddresses } from "../contract.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** What the book keeps of a node, from the published directory view (contract.ts). */
const SELECT_DIRECTORY = "SELECT id, name, host(address) AS address, folder_path::text[] AS folder_path, effective_pool AS pool FROM inventory.node_directory";
type DirectoryRow = { id: string; name: string; address: string; folder_path: string[]; pool: string };
const toNode = (r: DirectoryRow): AttributedNode => ({ id: r.id, name: r.name, folder_path: r.folder_path, pool: r.pool });

/**
 * Address → node, for plugins that attribute what a device sends (syslog, traps, flow exports) to the
 * node standing at the sender's address. Kept in memory (receivers look up every message): a node's change
 * re-reads that node (coalesced, 200 ms), a folder's change everything, and everything every addressBookRefreshMs
 * (changes made on another replica). Two nodes at one address: the one in the receiving poller's pool when a pool is given, else the first by name.
 * Started with the plugin (full mode).
 */
@Injectable()
export class NodeAddressBook implements NodeAddresses {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  private byAddress = new Map<string, AttributedNode>();
  private byId = new Map<string, AttributedNode>();
  private byPool = new Map<string, Map<string, AttributedNode>>();
  /** Each node's address key (canonicalIp), and the nodes at each key: what a patch needs to stay exact. */
  private keyOf = new Map<string, string>();
  private idsAt = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | null = null;
  private reloadTimer: NodeJS.Timeout | null = null;
  private off: (() => void)[] = [];
  /** The read in progress (full or patch): reads run one after another, never two at once. */
  private loading: Promise<void> = Promise.resolve();
  private fullLoad: Promise<void> | null = null;
  /** Nodes changed since the last read, re-read by id; a folder change re-reads everything. */
  private dirty = new Set<string>();
  private dirtyAll = false;
  private reloaded = new Set<(changed: readonly string[]) => void>();

  async start(): Promise<void> {
    if (this.timer) return;
    await this.reload();
    // A node's event re-reads that node only (issue 29: a full re-read per write burst cost the database 15–45 ms at
    // 3,000 nodes, five times a second under a write load); a folder's re-reads everything (paths, pools).
    const node = (e: { id: string }) => this.reloadSoon(e.id);
    const all = () => this.reloadSoon(null);
    const bus = this.ctx.bus;
    this.off = [
      bus.on("inventory.node.created", node),
      bus.on("inventory.node.updated", node),
      bus.on("inventory.node.deleted", node),
      bus.on("inventory.folder.updated", all),
      bus.on("inventory.folder.deleted", all),
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
   * holds a copy). Keep it current with the addresses onReload names.
   */
  entries(pool: string): [string, AttributedNode][] {
    const out = new Map(this.byAddress);
    for (const [address, node] of this.byPool.get(pool) ?? []) out.set(address, node);
    return [...out];
  }

  /**
   * Calls `fn` after every read of the directory with the address keys (canonicalIp) whose node byIp may now give
   * otherwise, for any pool (none when nothing changed); returns the unsubscribe. A copy stays exact by re-reading
   * byIp for just those: at 50,000 nodes a whole copy costs ~40 ms to make and as much to take in.
   */
  onReload(fn: (changed: readonly string[]) => void): () => void {
    this.reloaded.add(fn);
    return () => this.reloaded.delete(fn);
  }

  /** Re-reads the whole directory now (tests and the timer); calls made while one waits share it. */
  reload(): Promise<void> {
    this.fullLoad ??= this.queue(async () => {
      this.fullLoad = null;
      this.dirty.clear();
      this.dirtyAll = false;
      await this.load();
    });
    return this.fullLoad;
  }

  private queue(fn: () => Promise<void>): Promise<void> {
    const next = this.loading.then(fn);
    this.loading = next.catch(() => undefined);
    return next;
  }

  /** `id` changed (null: a folder, so everything may have): read it within 200 ms, with the others of that time. */
  private reloadSoon(id: string | null): void {
    if (id === null) this.dirtyAll = true;
    else this.dirty.add(id.toLowerCase());
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      if (this.dirtyAll) void this.reload();
      else void this.queue(() => this.patch());
    }, 200);
    this.reloadTimer.unref();
  }

  /**
   * Re-reads the changed nodes by id and updates the maps in place. Exact while every address they leave or take is
   * held by at most one node: which of two nodes at one address comes first is the directory's name order (the
   * database's collation), so an address shared after the change re-reads everything instead.
   */
  private async patch(): Promise<void> {
    if (this.dirty.size === 0) return;
    const ids = [...this.dirty];
    this.dirty.clear();
    let rows: DirectoryRow[];
    try {
      ({ rows } = await this.ctx.store.query<DirectoryRow>(`${SELECT_DIRECTORY} WHERE id = ANY($1::uuid[])`, [ids]));
    } catch (err) {
      this.ctx.log.warn("node address book not read: it keeps the previous map", { error: err });
      for (const id of ids) this.dirty.add(id);
      return; // the next change or the periodic re-read takes them
    }
    // The nodes at every address touched, once the change is applied.
    const touched = new Map<string, Set<string>>();
    const at = (key: string) => {
      let set = touched.get(key);
      if (!set) touched.set(key, (set = new Set(this.idsAt.get(key))));
      return set;
    };
    for (const id of ids) {
      const old = this.keyOf.get(id);
      if (old !== undefined) at(old).delete(id);
    }
    for (const r of rows) at(canonicalIp(r.address)).add(r.id);
    if ([...touched.values()].some((set) => set.size > 1)) return this.load();
    // Apply: the changed nodes leave their old address and pool, take their new ones; each touched address then
    // names its single node (or nothing).
    const oldPools = new Set<string>();
    for (const id of ids) {
      const prev = this.byId.get(id);
      if (prev) oldPools.add(prev.pool);
      this.byId.delete(id);
      this.keyOf.delete(id);
    }
    for (const r of rows) {
      this.byId.set(r.id, toNode(r));
      this.keyOf.set(r.id, canonicalIp(r.address));
    }
    for (const [key, set] of touched) {
      if (set.size === 0) this.idsAt.delete(key);
      else this.idsAt.set(key, set);
      const was = this.byAddress.get(key);
      if (was) oldPools.add(was.pool);
      this.byAddress.delete(key);
      for (const pool of oldPools) this.byPool.get(pool)?.delete(key);
      const [only] = set;
      const node = only === undefined ? undefined : this.byId.get(only);
      if (!node) continue;
      this.byAddress.set(key, node);
      let inPool = this.byPool.get(node.pool);
      if (!inPool) this.byPool.set(node.pool, (inPool = new Map()));
      inPool.set(key, node);
    }
    this.tell([...touched.keys()]);
  }

  private tell(changed: readonly string[]): void {
    for (const fn of this.reloaded) fn(changed);
  }

  private async load(): Promise<void> {
    try {
      const { rows } = await this.ctx.store.query<DirectoryRow>(`${SELECT_DIRECTORY} ORDER BY name, id`);
      const byAddress = new Map<string, AttributedNode>();
      const byId = new Map<string, AttributedNode>();
      const byPool = new Map<string, Map<string, AttributedNode>>();
      const keyOf = new Map<string, string>();
      const idsAt = new Map<string, Set<string>>();
      for (const r of rows) {
        const node = toNode(r);
        byId.set(r.id, node);
        const key = canonicalIp(r.address);
        keyOf.set(r.id, key);
        let here = idsAt.get(key);
        if (!here) idsAt.set(key, (here = new Set()));
        here.add(r.id);
        if (!byAddress.has(key)) byAddress.set(key, node);
        let inPool = byPool.get(r.pool);
        if (!inPool) byPool.set(r.pool, (inPool = new Map()));
        if (!inPool.has(key)) inPool.set(key, node);
      }
      const changed = changedKeys(this.byAddress, byAddress, this.byPool, byPool);
      this.keyOf = keyOf;
      this.idsAt = idsAt;
      this.byAddress = byAddress;
      this.byId = byId;
      this.byPool = byPool;
      this.tell(changed);
    } catch (err) {
      this.ctx.log.warn("node address book not read: it keeps the previous map", { error: err });
    }
  }
}

const sameNode = (a: AttributedNode | undefined, b: AttributedNode | undefined): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.id === b.id &&
    a.name === b.name &&
    a.pool === b.pool &&
    a.folder_path.length === b.folder_path.length &&
    a.folder_path.every((f, i) => f === b.folder_path[i]));

/**
 * The address keys whose node differs between two readings of the book, in the all-pools map or in any pool's (a
 * pool gone or new counts with every key it held or holds).
 */
function changedKeys(
  before: Map<string, AttributedNode>,
  after: Map<string, AttributedNode>,
  poolsBefore: Map<string, Map<string, AttributedNode>>,
  poolsAfter: Map<string, Map<string, AttributedNode>>,
): string[] {
  const changed = new Set<string>();
  const compare = (a: Map<string, AttributedNode> | undefined, b: Map<string, AttributedNode> | undefined) => {
    for (const [key, node] of a ?? []) if (!sameNode(node, b?.get(key))) changed.add(key);
    for (const key of b?.keys() ?? []) if (!a?.has(key)) changed.add(key);
  };
  compare(before, after);
  for (const pool of new Set([...poolsBefore.keys(), ...poolsAfter.keys()])) compare(poolsBefore.get(pool), poolsAfter.get(pool));
  return [...changed];
}
