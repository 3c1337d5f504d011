import { Inject, Injectable } from "@tsed/di";
import { badRequest, conflict, decodeCursor, isPgError, isUuid, notFound, page, PG_ERROR, type Queryable } from "../../../core/index.js";
import { POLL_INTERVAL_DEFAULT, type ProfileBody, type ProfileView } from "../models/ProfileModels.js";
import { ProfileRepository, type ProfileRow } from "../repositories/ProfileRepository.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Device profiles: global (not filed in folders), so every caller with read may
 * list them; writes need an unrestricted account (the controller says so).
 */
@Injectable()
export class ProfileService {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  @Inject(ProfileRepository)
  private repo: ProfileRepository;

  async list(limit: number, cursor: string | undefined): Promise<{ rows: ProfileView[]; next: string | null }> {
    let after: { key: string; id: string } | null = null;
    if (cursor !== undefined) {
      const [key, id] = decodeCursor(cursor, 2, ([, last]) => isUuid(last));
      after = { key, id };
    }
    const found = await this.repo.list(limit + 1, after);
    const { rows, next } = page(found, limit, (r) => [r.sort_key, r.id]);
    return { rows: rows.map(({ sort_key: _key, ...view }) => view), next };
  }

  async get(id: string): Promise<ProfileView> {
    const found = await this.repo.get(id);
    if (!found) throw notFound("No such profile.");
    return found;
  }

  async create(body: ProfileBody): Promise<string> {
    const row = this.toRow(body);
    return this.ctx.store.tx(async (db) => {
      if (row.parent_id) await this.assertParent(row.parent_id, db);
      return this.write(() => this.repo.insert(row, db));
    });
  }

  async replace(id: string, body: ProfileBody): Promise<ProfileView> {
    const row = this.toRow(body);
    return this.ctx.store.tx(async (db) => {
      await this.repo.lockTree(db);
      if (!(await this.repo.lock(id, db))) throw notFound("No such profile.");
      if (row.parent_id) {
        if (row.parent_id === id) throw badRequest("profile_cycle", "A profile cannot be its own parent.");
        await this.assertParent(row.parent_id, db);
        if (await this.repo.chainContains(row.parent_id, id, db)) {
          throw badRequest("profile_cycle", "The chosen parent descends from this profile; that would make a cycle.");
        }
      }
      await this.write(() => this.repo.update(id, row, db));
      return (await this.repo.get(id, db))!;
    });
  }

  /** Refused (409 profile_in_use) while nodes, classification rules or child profiles name it. */
  async remove(id: string): Promise<void> {
    await this.ctx.store.tx(async (db) => {
      // The row lock makes concurrent inserts that reference the profile wait for this decision.
      if (!(await this.repo.lock(id, db))) throw notFound("No such profile.");
      const refs = await this.repo.references(id, db);
      if (refs.nodes || refs.rules || refs.children) {
        const uses = [
          refs.nodes ? plural(refs.nodes, "node", "nodes") : null,
          refs.rules ? plural(refs.rules, "classification rule", "classification rules") : null,
          refs.children ? plural(refs.children, "child profile", "child profiles") : null,
        ].filter(Boolean);
        throw conflict("profile_in_use", `The profile is still used by ${uses.join(", ")}; reassign them first.`);
      }
      await this.repo.delete(id, db);
    });
  }

  private toRow(body: ProfileBody): ProfileRow {
    return {
      name: body.name,
      category: body.category ?? null,
      parent_id: body.parent_id ?? null,
      vendor: body.vendor ?? null,
      poll_interval_secs: body.poll_interval_secs ?? POLL_INTERVAL_DEFAULT,
    };
  }

  private async assertParent(parentId: string, db: Queryable): Promise<void> {
    if (!(await this.repo.exists(parentId, db))) throw badRequest("unknown_reference", "parent_id names no profile.");
  }

  /** Runs a write, turning the store's refusals of user input into envelope errors. */
  private async write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) {
        throw conflict("name_taken", "A profile with this name already exists (names are compared case-insensitively).");
      }
      if (isPgError(err, PG_ERROR.foreignKeyViolation)) throw badRequest("unknown_reference", "parent_id names no profile.");
      throw err;
    }
  }
}
