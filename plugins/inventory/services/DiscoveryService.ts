import { Inject, Injectable } from "@tsed/di";
import { ApiError, badRequest, isIpAddress, isPgError, PG_ERROR, type Queryable, type Scope } from "../../../core/index.js";
import type { DiscoveryImport, NodeEvent } from "../contract.js";
import type { DiscoveryFiled, DiscoveryImportBody, DiscoveryImportResult } from "../models/DiscoveryModels.js";
import { DiscoveryRepository, type NodeInsertRow } from "../repositories/DiscoveryRepository.js";
import { InventoryLimitsService } from "./InventoryLimitsService.js";
import { InventoryScope } from "./InventoryScope.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

type FilingOutcome = keyof DiscoveryFiled;

/** A row after validation: trimmed text, and its group_id in three states (undefined = follow the request). */
interface ImportRow extends Omit<NodeInsertRow, "group_id"> {
  group_id: string | null | undefined;
}

/** Ids compare lower-case, as PostgreSQL prints them; keeps null and undefined as they are. */
const lower = <T extends string | null | undefined>(id: T): T => (typeof id === "string" ? (id.toLowerCase() as T) : id);

const distinct = (ids: (string | null | undefined)[]): string[] => [...new Set(ids.filter((id): id is string => typeof id === "string"))];

/**
 * Discovery import: many devices at once, in one transaction. Rows whose address already
 * holds a device node are skipped (an earlier row of the same request counts), rows may be
 * filed into folders by their IP ranges, and a folder-scoped caller cannot leave anything
 * at the tree root.
 */
@Injectable()
export class DiscoveryService implements DiscoveryImport {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(InventoryLimitsService)
  private limits: InventoryLimitsService;

  @Inject(DiscoveryRepository)
  private repo: DiscoveryRepository;

  @Inject(InventoryScope)
  private scopes: InventoryScope;

  /**
   * Imports the rows within `scope` (the caller's; "All" for a system job): validates them, checks every id they name,
   * decides each row's folder, inserts the rows whose address holds no device node yet, and announces them after the commit.
   */
  async import(body: DiscoveryImportBody, scope: Scope): Promise<DiscoveryImportResult> {
    const rows = this.validRows(body);
    const fallback = lower(body.group_id) ?? null;
    const fileByPrefix = body.file_by_prefix === true;

    let outcome: { result: DiscoveryImportResult; events: NodeEvent[] };
    try {
      outcome = await this.ctx.store.tx(async (db) => {
        await this.repo.lockImports(db);
        const visible = await this.scopes.visibleFolders(scope, db);
        await this.checkReferences(db, rows, fallback, visible);
        const { target, filing } = await this.placeRows(db, rows, fallback, fileByPrefix, visible);
        // A folder-scoped caller may not leave any row of the request bound for the tree root, not even one that turns out to exist already.
        if (target.includes(null)) this.scopes.assertMayUseRoot(scope);
        return this.insertNew(db, rows, target, fileByPrefix ? filing : null);
      });
    } catch (err) {
      // The addresses were checked above; should PostgreSQL still refuse one as inet, it is the caller's input, not a 500.
      if (!(err instanceof ApiError) && isPgError(err, PG_ERROR.invalidTextRepresentation)) {
        throw badRequest("validation_failed", "An address is not an IPv4 or IPv6 address.");
      }
      throw err;
    }

    // After the commit only: listeners must never see a node that a rollback took back.
    for (const e of outcome.events) await this.ctx.bus.emit("inventory.node.created", e);
    return outcome.result;
  }

  /** The request's rows, trimmed and checked beyond the schema (the sweep cap, non-blank names, IP addresses); ids lower-cased. */
  private validRows(body: DiscoveryImportBody): ImportRow[] {
    const cap = this.limits.sweepSize;
    if (body.nodes.length > cap) {
      throw badRequest("too_many_nodes", `One import carries at most ${cap} nodes (one sweep, pluginConfig.inventory.sweepSize).`);
    }
    return body.nodes.map((n, i): ImportRow => {
      const name = n.name.trim();
      if (!name) throw badRequest("validation_failed", `nodes[${i}].name must not be blank.`);
      const address = n.address.trim();
      if (!isIpAddress(address)) throw badRequest("validation_failed", `nodes[${i}].address must be an IPv4 or IPv6 address.`);
      return {
        name,
        address,
        credential_id: lower(n.credential_id) ?? null,
        profile_id: lower(n.profile_id) ?? null,
        model: n.model ?? null,
        vendor: n.vendor ?? null,
        snmp_port: n.snmp_port ?? 161,
        group_id: lower(n.group_id),
      };
    });
  }

  /** Every id the request names must exist (a folder also be visible) before anything is written: else 400 unknown_reference. */
  private async checkReferences(db: Queryable, rows: ImportRow[], fallback: string | null, visible: string[] | null): Promise<void> {
    const folders = await this.repo.existingFolders(db, distinct([fallback, ...rows.map((r) => r.group_id)]), visible);
    if (fallback !== null && !folders.has(fallback)) throw badRequest("unknown_reference", "group_id names no folder.");
    const profiles = await this.repo.existingProfiles(db, distinct(rows.map((r) => r.profile_id)));
    const credentials = await this.repo.existingCredentials(db, distinct(rows.map((r) => r.credential_id)));
    rows.forEach((r, i) => {
      if (typeof r.group_id === "string" && !folders.has(r.group_id)) throw badRequest("unknown_reference", `nodes[${i}].group_id names no folder.`);
      if (r.profile_id !== null && !profiles.has(r.profile_id)) throw badRequest("unknown_reference", `nodes[${i}].profile_id names no profile.`);
      if (r.credential_id !== null && !credentials.has(r.credential_id)) {
        throw badRequest("unknown_reference", `nodes[${i}].credential_id names no credential.`);
      }
    });
  }

  /**
   * Where each row goes: its own group_id, else (filing by prefix) the visible folder whose ip_ranges hold its address,
   * else the request's group_id. `filing` says how each row that followed the ranges fared.
   */
  private async placeRows(
    db: Queryable,
    rows: ImportRow[],
    fallback: string | null,
    fileByPrefix: boolean,
    visible: string[] | null,
  ): Promise<{ target: (string | null)[]; filing: (FilingOutcome | null)[] }> {
    const target: (string | null)[] = rows.map((r) => (r.group_id === undefined ? fallback : r.group_id));
    const filing: (FilingOutcome | null)[] = rows.map(() => null);
    if (!fileByPrefix) return { target, filing };
    const following = rows.flatMap((r, i) => (r.group_id === undefined ? [i] : []));
    for (const i of following) filing[i] = "unmatched";
    const claims = await this.repo.claims(
      db,
      following.map((i) => rows[i].address),
      visible,
    );
    for (const c of claims) {
      const i = following[c.index];
      if (c.folders === 1) {
        filing[i] = "matched";
        target[i] = c.group_id;
      } else if (c.top === 1) {
        filing[i] = "chosen";
        target[i] = c.group_id;
      } else {
        filing[i] = "ambiguous";
      }
    }
    return { target, filing };
  }

  /** Inserts the rows whose address holds no device node yet (an earlier row of the request counts); counts the filing of those kept. */
  private async insertNew(
    db: Queryable,
    rows: ImportRow[],
    target: (string | null)[],
    filing: (FilingOutcome | null)[] | null,
  ): Promise<{ result: DiscoveryImportResult; events: NodeEvent[] }> {
    const skipped = new Set(
      (
        await this.repo.checkAddresses(
          db,
          rows.map((r) => r.address),
        )
      ).map((c) => c.index),
    );
    const keep = rows.flatMap((_, i) => (skipped.has(i) ? [] : [i]));
    const inserted = await this.repo.insertNodes(
      db,
      keep.map((i) => ({ ...rows[i], group_id: target[i] })),
    );

    let filed: DiscoveryFiled | null = null;
    if (filing) {
      filed = { ambiguous: 0, chosen: 0, matched: 0, unmatched: 0 };
      for (const i of keep) {
        const how = filing[i];
        if (how) filed[how]++;
      }
    }
    const paths = await this.repo.folderPaths(db, distinct(inserted.map((n) => n.group_id)));
    const events: NodeEvent[] = inserted.map((n) => ({ ...n, folder_path: n.group_id ? (paths.get(n.group_id) ?? []) : [] }));
    return { result: { created: inserted.length, skipped_existing: skipped.size, filed }, events };
  }
}
