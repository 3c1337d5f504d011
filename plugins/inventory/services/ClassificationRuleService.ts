import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, invalidCursor, isPgError, isUuid, notFound, page, PG_ERROR } from "../../../core/index.js";
import { INT32_MAX, INT32_MIN, RULE_PRIORITY_DEFAULT, type ClassificationRuleBody, type ClassificationRuleView } from "../models/ClassificationRuleModels.js";
import { ClassificationRuleRepository, type ClassificationRuleRow } from "../repositories/ClassificationRuleRepository.js";

/** Classification rules (CRUD). Which rule wins for a device is ClassifierService's business. */
@Injectable()
export class ClassificationRuleService {
  @Inject(ClassificationRuleRepository)
  private repo: ClassificationRuleRepository;

  /**
   * Rules in evaluation order: priority ascending, then id. Without `limit`, every rule (after the
   * cursor, if any) and no next cursor: the spec's list is the whole evaluation order, and the
   * number of rules has no cap. With `limit`, one keyset page.
   */
  async list(limit: number | undefined, cursor: string | undefined): Promise<{ rows: ClassificationRuleView[]; next: string | null }> {
    let after: { priority: number; id: string } | null = null;
    if (cursor !== undefined) {
      const [priority, id] = decodeCursor(cursor, 2, ([, last]) => isUuid(last));
      const p = /^-?[0-9]{1,10}$/.test(priority) ? Number(priority) : NaN;
      if (!(p >= INT32_MIN && p <= INT32_MAX)) throw invalidCursor();
      after = { priority: p, id };
    }
    if (limit === undefined) return { rows: await this.repo.list(null, after), next: null };
    const found = await this.repo.list(limit + 1, after);
    return page(found, limit, (r) => [String(r.priority), r.id]);
  }

  async get(id: string): Promise<ClassificationRuleView> {
    const found = await this.repo.get(id);
    if (!found) throw notFound("No such classification rule.");
    return found;
  }

  async create(body: ClassificationRuleBody): Promise<string> {
    const row = this.toRow(body);
    return this.write(() => this.repo.insert(row));
  }

  async replace(id: string, body: ClassificationRuleBody): Promise<ClassificationRuleView> {
    const row = this.toRow(body);
    const updated = await this.write(() => this.repo.update(id, row));
    if (!updated) throw notFound("No such classification rule.");
    return updated;
  }

  async remove(id: string): Promise<void> {
    if (!(await this.repo.delete(id))) throw notFound("No such classification rule.");
  }

  /** Checks what the schema cannot say and normalises the OID prefix (no leading dot). */
  private toRow(body: ClassificationRuleBody): ClassificationRuleRow {
    const prefix = body.sysobjectid_prefix ?? null;
    const regex = body.sysdescr_regex ?? null;
    if (prefix === null && regex === null) {
      throw badRequest("validation_failed", "A classification rule needs sysobjectid_prefix, sysdescr_regex or both.");
    }
    if (regex !== null) {
      try {
        new RegExp(regex);
      } catch {
        throw badRequest("invalid_regex", "sysdescr_regex is not a valid JavaScript regular expression.");
      }
    }
    return {
      enabled: body.enabled ?? true,
      priority: body.priority ?? RULE_PRIORITY_DEFAULT,
      profile_id: body.profile_id,
      sysobjectid_prefix: prefix === null ? null : prefix.replace(/^\./, ""),
      sysdescr_regex: regex,
      vendor: body.vendor ?? null,
      model: body.model ?? null,
    };
  }

  /** The profile reference is checked by the foreign key, which also holds against a concurrent delete. */
  private async write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isPgError(err, PG_ERROR.foreignKeyViolation)) throw badRequest("unknown_reference", "profile_id names no profile.");
      throw err;
    }
  }
}
