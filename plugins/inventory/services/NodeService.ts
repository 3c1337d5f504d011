import { Inject, Injectable } from "@tsed/di";
import {
  ApiError,
  assertPoolName,
  badRequest,
  decodeCursor,
  isIpAddress,
  isPgError,
  isUuid,
  notFound,
  PG_ERROR,
  pgConstraint,
  type Queryable,
  type Scope,
  scopeFolders,
} from "../../../core/index.js";
import type { NodeEvent, NodeFacts, SystemFacts } from "../contract.js";
import { normaliseTags } from "../lib/validation.js";
import type { NodeListFilter, NodeListQuery, NodeView, NodeWrite } from "../models/NodeModels.js";
import { NodeRepository, type NodeRecord } from "../repositories/NodeRepository.js";
import { InventoryScope } from "./InventoryScope.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

const unknownReference = (field: string, what: string) => badRequest("unknown_reference", `${field} names no ${what} you can use.`);

// A foreign key that fails despite the checks (a concurrent delete) is the same user mistake.
const FK_FIELDS: Record<string, [string, string]> = {
  nodes_credential_id_fkey: ["credential_id", "credential"],
  nodes_profile_id_fkey: ["profile_id", "profile"],
  nodes_group_id_fkey: ["group_id", "folder"],
  nodes_parent_id_fkey: ["parent_id", "node"],
};

function mapStoreError(err: unknown): unknown {
  const constraint = pgConstraint(err);
  if (isPgError(err, PG_ERROR.foreignKeyViolation) && constraint && FK_FIELDS[constraint]) return unknownReference(...FK_FIELDS[constraint]);
  return err;
}

/** Nodes: what is monitored, filed in folders, seen through the caller's folder scope. */
@Injectable()
export class NodeService implements NodeFacts {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(InventoryScope)
  private scope: InventoryScope;

  @Inject(NodeRepository)
  private repo: NodeRepository;

  async list(query: NodeListQuery, scope: Scope): Promise<{ rows: NodeView[]; next: string | null }> {
    if (query.pool !== undefined) assertPoolName(query.pool);
    if (query.address !== undefined && !isIpAddress(query.address)) throw badRequest("validation_failed", "address must be an IPv4 or IPv6 address.");
    let after: { nameKey: string; id: string } | null = null;
    if (query.cursor !== undefined) {
      // A cursor carrying a non-uuid must not reach SQL as a cast error.
      const [nameKey, id] = decodeCursor(query.cursor, 2, ([, last]) => isUuid(last));
      after = { nameKey, id };
    }
    // A folder filter outside the caller's scope is 404, as if the folder did not exist.
    if (query.group_id !== undefined) await this.scope.assertFolderVisible(query.group_id, scope);
    const filter: NodeListFilter = {
      groupId: query.group_id ?? null,
      effectivePool: query.pool ?? null,
      profileId: query.profile_id ?? null,
      q: query.q === undefined || query.q === "" ? null : query.q,
      address: query.address ?? null,
    };
    return this.repo.list(filter, scopeFolders(scope), after, query.limit);
  }

  async get(id: string, scope: Scope): Promise<NodeView> {
    await this.scope.assertNodeVisible(id, scope);
    const found = await this.repo.find(id);
    if (!found) throw notFound("No such node.");
    return found;
  }

  async create(body: NodeWrite, scope: Scope): Promise<string> {
    const record = this.toRecord(body);
    if (record.group_id === null) this.scope.assertMayUseRoot(scope);
    // Without a reference to check, one statement (no transaction): a pool connection held for one round trip.
    const checks = record.group_id !== null || record.credential_id !== null || record.profile_id !== null || record.parent_id !== null;
    const event = checks
      ? await this.write(async (db) => {
          await this.checkReferences(record, scope, null, db);
          return this.repo.insert(record, db);
        })
      : await this.once(() => this.repo.insert(record));
    await this.ctx.bus.emit("inventory.node.created", event);
    return event.id;
  }

  /** Full-document update: absent optional fields take their defaults. */
  async update(id: string, body: NodeWrite, scope: Scope): Promise<void> {
    const record = this.toRecord(body);
    if (record.parent_id === id) throw badRequest("validation_failed", "parent_id cannot name the node itself.");
    const event = await this.write(async (db) => {
      await this.scope.assertNodeVisible(id, scope, db);
      if (record.group_id === null) this.scope.assertMayUseRoot(scope);
      await this.checkReferences(record, scope, id, db);
      if (!(await this.repo.update(id, record, db))) throw notFound("No such node.");
      return this.repo.event(id, db);
    });
    await this.ctx.bus.emit("inventory.node.updated", event);
  }

  async remove(id: string, scope: Scope): Promise<void> {
    // One statement: the scope check is its condition, and it returns the node as it was (the event is delivered by
    // its folder path). Out of scope answers as gone.
    const event = await this.once(() => this.repo.delete(id, scopeFolders(scope)));
    await this.ctx.bus.emit("inventory.node.deleted", event);
  }

  /**
   * For the polling plugin (no caller, no scope): stores the facts a poller learnt.
   * Emits inventory.node.updated when they changed. Returns false when the node is gone.
   */
  async recordFacts(id: string, facts: SystemFacts): Promise<boolean> {
    const clean: SystemFacts = { sys_object_id: facts.sys_object_id ?? null, sys_descr: facts.sys_descr ?? null, sys_name: facts.sys_name ?? null };
    if (await this.repo.setFacts(id, clean)) {
      const event = await this.repo.event(id);
      if (event) await this.ctx.bus.emit("inventory.node.updated", event);
      return event !== null;
    }
    return this.repo.exists(id);
  }

  /** Runs a write in one transaction; a node gone before the event could be read is 404. */
  private write(fn: (db: Queryable) => Promise<NodeEvent | null>): Promise<NodeEvent> {
    return this.once(() => this.ctx.store.tx((client) => fn(client)));
  }

  /** Runs a write (one statement outside a transaction, or write()'s transaction); a node gone (null) is 404. */
  private async once(run: () => Promise<NodeEvent | null>): Promise<NodeEvent> {
    let event: NodeEvent | null;
    try {
      event = await run();
    } catch (err) {
      throw mapStoreError(err);
    }
    if (!event) throw notFound("No such node.");
    return event;
  }

  /** Validation the schema cannot say, and the defaults of absent fields. */
  private toRecord(body: NodeWrite): NodeRecord {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must hold a non-blank character.");
    const address = body.address.trim();
    if (!isIpAddress(address)) throw badRequest("validation_failed", "address must be an IPv4 or IPv6 address.");
    assertPoolName(body.pool);
    const blankToNull = (v: string | null | undefined) => (v === undefined || v === null || v.trim() === "" ? null : v);
    return {
      name,
      address,
      credential_id: body.credential_id ?? null,
      group_id: body.group_id ?? null,
      parent_id: body.parent_id ?? null,
      pool: body.pool ?? null,
      profile_id: body.profile_id ?? null,
      vendor: blankToNull(body.vendor),
      model: blankToNull(body.model),
      snmp_port: body.snmp_port ?? 161,
      notes: blankToNull(body.notes),
      tags: normaliseTags(body.tags, "tags"),
      tags_excluded: normaliseTags(body.tags_excluded, "tags_excluded"),
      profile_locked: body.profile_locked ?? false,
      sort_order: body.sort_order ?? 0,
    };
  }

  /** Every id of the body names something that exists and that the caller may use, else 400 unknown_reference naming the field. */
  private async checkReferences(record: NodeRecord, scope: Scope, self: string | null, db: Queryable): Promise<void> {
    if (record.group_id !== null) await this.visibleOr400(() => this.scope.assertFolderVisible(record.group_id!, scope, db), "group_id", "folder");
    if (record.credential_id !== null && !(await this.repo.credentialExists(record.credential_id, db))) throw unknownReference("credential_id", "credential");
    if (record.profile_id !== null && !(await this.repo.profileExists(record.profile_id, db))) throw unknownReference("profile_id", "profile");
    if (record.parent_id !== null) {
      await this.visibleOr400(() => this.scope.assertNodeVisible(record.parent_id!, scope, db), "parent_id", "node");
      if (self !== null && (await this.repo.isAncestorOrSelf(self, record.parent_id, db))) {
        throw badRequest("validation_failed", "parent_id cannot name a node beneath this one.");
      }
    }
  }

  private async visibleOr400(check: () => Promise<void>, field: string, what: string): Promise<void> {
    try {
      await check();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw unknownReference(field, what);
      throw err;
    }
  }
}
