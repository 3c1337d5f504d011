import { Inject, Injectable } from "@tsed/di";
import { RuleIndex, type Resolution, type SampleTarget } from "../lib/rules.js";
import { ThresholdRepository, type DirectoryEntry } from "../repositories/ThresholdRepository.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/** Rules are re-read at least this often even without a change seen here (another replica may have written them). */
const RULES_MAX_AGE_MS = 30_000;
/** How often, at most, the rules' version is compared with the store's when rules are wanted (an edit on another replica shows within this). */
const RULES_VERSION_CHECK_MS = 1000;
/** Directory rows are dropped this often (a change inventory announced to another replica only). */
const DIRECTORY_MAX_AGE_MS = 300_000;

/**
 * Which threshold applies to a sample (precedence in lib/rules.ts), over in-memory
 * caches of every rule and of the directory rows of the nodes seen. The rule cache is
 * dropped on every threshold change made here, when the rules' version in the store
 * moves (looked at when rules are wanted, at most once a second: an edit on another
 * replica) and re-read at least every 30 s; a
 * directory row is dropped on the inventory event about its node, every row on a
 * folder event (paths move), and all of them every 5 minutes.
 */
@Injectable()
export class RuleResolver {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(ThresholdRepository)
  private repo: ThresholdRepository;

  private index: RuleIndex = new RuleIndex([]);
  private rulesLoadedAt = 0;
  private rulesGeneration = 0;
  private loading: Promise<void> | null = null;

  private directory = new Map<string, DirectoryEntry>();
  private directoryLoadedAt = 0;
  private unsubscribe: (() => void)[] = [];
  private versionCheckedAt = 0;
  /** The rules' version when the index was read (null before the first read). */
  private version: string | null = null;

  /** Subscribes to inventory changes (called by the engine's start). */
  start(): void {
    this.stop();
    this.reset();
    const dropNode = (e: { id: string }) => {
      this.directory.delete(e.id.toLowerCase());
    };
    const dropAll = () => {
      this.directory.clear();
    };
    this.unsubscribe = [
      this.ctx.bus.on("inventory.node.created", dropNode),
      this.ctx.bus.on("inventory.node.updated", dropNode),
      this.ctx.bus.on("inventory.node.deleted", dropNode),
      this.ctx.bus.on("inventory.folder.created", dropAll),
      this.ctx.bus.on("inventory.folder.updated", dropAll),
      this.ctx.bus.on("inventory.folder.deleted", dropAll),
    ];
  }

  stop(): void {
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
  }

  /** Drops the rule cache when the store's rules moved since the last look (an edit on another replica). */
  private async checkVersion(): Promise<void> {
    try {
      const v = await this.repo.version();
      if (this.version !== null && v !== this.version) this.invalidateRules();
    } catch {
      // the store is away: the 30 s re-read applies
    }
  }

  reset(): void {
    this.index = new RuleIndex([]);
    this.rulesLoadedAt = 0;
    this.rulesGeneration++;
    this.loading = null;
    this.directory.clear();
    this.directoryLoadedAt = Date.now();
  }

  /** Drops the rule cache (a threshold was created, changed or deleted). */
  invalidateRules(): void {
    this.rulesLoadedAt = 0;
    this.rulesGeneration++;
  }

  /** Drops the directory cache (all nodes, or the ones named). */
  invalidateNodes(ids?: readonly string[]): void {
    if (!ids) this.directory.clear();
    else for (const id of ids) this.directory.delete(id.toLowerCase());
  }

  /** The current rule index, re-read first when it was dropped or is older than 30 s. */
  async rules(): Promise<RuleIndex> {
    if (Date.now() - this.versionCheckedAt > RULES_VERSION_CHECK_MS) {
      this.versionCheckedAt = Date.now();
      await this.checkVersion();
    }
    if (this.rulesLoadedAt === 0 || Date.now() - this.rulesLoadedAt > RULES_MAX_AGE_MS) {
      this.loading ??= this.loadRules().finally(() => {
        this.loading = null;
      });
      await this.loading;
      // A change while loading: load again so the answer is never older than the change.
      if (this.rulesLoadedAt === 0) return this.rules();
    }
    return this.index;
  }

  private async loadRules(): Promise<void> {
    const generation = this.rulesGeneration;
    // The version first: a change after it shows as a new version at the next look.
    const version = await this.repo.version();
    const rules = await this.repo.all();
    this.version = version;
    this.index = new RuleIndex(rules);
    if (generation === this.rulesGeneration) this.rulesLoadedAt = Date.now();
  }

  /** Directory rows of these nodes, from the cache, the missing ones read in one query; unknown nodes are absent. */
  async nodes(ids: Iterable<string>): Promise<Map<string, DirectoryEntry>> {
    if (Date.now() - this.directoryLoadedAt > DIRECTORY_MAX_AGE_MS) {
      this.directory.clear();
      this.directoryLoadedAt = Date.now();
    }
    const out = new Map<string, DirectoryEntry>();
    const missing = new Set<string>();
    for (const raw of ids) {
      const id = raw.toLowerCase();
      if (out.has(id)) continue;
      const hit = this.directory.get(id);
      if (hit) out.set(id, hit);
      else missing.add(id);
    }
    if (missing.size > 0) {
      for (const row of await this.repo.directory([...missing])) {
        const entry = { ...row, id: row.id.toLowerCase(), folder_path: row.folder_path.map((f) => f.toLowerCase()) };
        this.directory.set(entry.id, entry);
        out.set(entry.id, entry);
      }
    }
    return out;
  }

  /** The node's cached directory row, if any (no I/O). */
  cachedNode(id: string): DirectoryEntry | undefined {
    return this.directory.get(id.toLowerCase());
  }

  /** The winning rule for a sample of a node (index from `rules()`), or null when no rule applies. */
  resolve(index: RuleIndex, target: SampleTarget): Resolution | null {
    return index.resolve(target);
  }
}
