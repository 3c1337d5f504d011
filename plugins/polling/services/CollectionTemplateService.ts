import { Inject, Injectable } from "@tsed/di";
import { badRequest, conflict, decodeCursor, isPgError, isUuid, notFound, page, PG_ERROR, pgConstraint } from "../../../core/index.js";
import { METRICS, RAW_COUNTER_METRICS } from "../contract.js";
import type {
  CollectionTemplateBody,
  CollectionTemplateItemBody,
  CollectionTemplateItemView,
  CollectionTemplateView,
} from "../models/CollectionTemplateModels.js";
import type { TemplateItem } from "../poller/types.js";
import { CollectionTemplateRepository, type ItemRow, type ProfileItemRow } from "../repositories/CollectionTemplateRepository.js";

const BUILT_IN_METRICS: ReadonlySet<string> = new Set(Object.values(METRICS));
const MAX_SUBID = 4294967295;
const MAX_SUBIDS = 128;

const noTemplate = () => notFound("No such collection template.");
const noItem = () => notFound("No such collection template item.");

/**
 * Collection templates (CRUD), their items, which profiles use them, and the items the poll
 * loop reads for a node of a given profile. Profiles are inventory's, known through its published
 * view inventory.profile_directory: a profile also uses the templates of its ancestors (the nearest
 * profile wins a metric name), and the links of a deleted profile are never read.
 */
@Injectable()
export class CollectionTemplateService {
  @Inject(CollectionTemplateRepository)
  private repo: CollectionTemplateRepository;

  async list(limit: number, cursor: string | undefined): Promise<{ rows: CollectionTemplateView[]; next: string | null }> {
    let after: { key: string; id: string } | null = null;
    if (cursor !== undefined) {
      const [key, id] = decodeCursor(cursor, 2, ([, last]) => isUuid(last));
      after = { key, id };
    }
    const found = await this.repo.list(limit + 1, after);
    const { rows, next } = page(found, limit, (r) => [r.name_key, r.id]);
    return { rows: rows.map(({ name_key: _k, ...view }) => view), next };
  }

  async get(id: string): Promise<CollectionTemplateView> {
    const found = await this.repo.get(id);
    if (!found) throw noTemplate();
    return found;
  }

  async create(body: CollectionTemplateBody): Promise<string> {
    return this.write(() => this.repo.insert({ name: body.name.trim(), description: body.description ?? null }));
  }

  async replace(id: string, body: CollectionTemplateBody): Promise<CollectionTemplateView> {
    const updated = await this.write(() => this.repo.update(id, { name: body.name.trim(), description: body.description ?? null }));
    if (!updated) throw noTemplate();
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    let deleted: boolean;
    try {
      deleted = await this.repo.delete(id);
    } catch (err) {
      // foreign_key_violation, or restrict_violation (profile links are ON DELETE RESTRICT)
      if (isPgError(err, PG_ERROR.foreignKeyViolation, PG_ERROR.restrictViolation)) {
        throw conflict("template_in_use", "Profiles use this collection template; detach it from them first.");
      }
      throw err;
    }
    if (!deleted) throw noTemplate();
  }

  // ---- items ----

  async listItems(templateId: string, limit: number, cursor: string | undefined): Promise<{ rows: CollectionTemplateItemView[]; next: string | null }> {
    const afterName = cursor === undefined ? null : decodeCursor(cursor, 1)[0];
    if (!(await this.repo.exists(templateId))) throw noTemplate();
    const found = await this.repo.listItems(templateId, limit + 1, afterName);
    return page(found, limit, (r) => [r.metric_name]);
  }

  async getItem(templateId: string, itemId: string): Promise<CollectionTemplateItemView> {
    const found = await this.repo.getItem(templateId, itemId);
    if (!found) {
      if (!(await this.repo.exists(templateId))) throw noTemplate();
      throw noItem();
    }
    return found;
  }

  async createItem(templateId: string, body: CollectionTemplateItemBody): Promise<string> {
    const row = this.itemRow(body);
    if (!(await this.repo.exists(templateId))) throw noTemplate();
    return this.write(() => this.repo.insertItem(templateId, row));
  }

  async replaceItem(templateId: string, itemId: string, body: CollectionTemplateItemBody): Promise<CollectionTemplateItemView> {
    const row = this.itemRow(body);
    const updated = await this.write(() => this.repo.updateItem(templateId, itemId, row));
    if (!updated) {
      if (!(await this.repo.exists(templateId))) throw noTemplate();
      throw noItem();
    }
    return updated;
  }

  async removeItem(templateId: string, itemId: string): Promise<void> {
    if (await this.repo.deleteItem(templateId, itemId)) return;
    if (!(await this.repo.exists(templateId))) throw noTemplate();
    throw noItem();
  }

  // ---- profiles ----

  /** The profile uses the template from now on (repeating it is not an error); 404 for a profile inventory does not have. */
  async attach(profileId: string, templateId: string): Promise<void> {
    if (!(await this.repo.profileExists(profileId))) throw notFound("No such profile.");
    try {
      await this.repo.attach(profileId, templateId);
    } catch (err) {
      if (isPgError(err, PG_ERROR.foreignKeyViolation)) throw noTemplate();
      throw err;
    }
  }

  /** The profile no longer uses the template (detaching one it does not use is not an error). */
  async detach(profileId: string, templateId: string): Promise<void> {
    if (await this.repo.detach(profileId, templateId)) return;
    if (!(await this.repo.exists(templateId))) throw noTemplate();
  }

  templatesOfProfile(profileId: string): Promise<CollectionTemplateView[]> {
    return this.repo.templatesOfProfile(profileId);
  }

  /**
   * What the poll loop reads for a node of this profile: the enabled items of every template
   * the profile or one of its ancestors uses. A metric name defined twice is read once: the
   * nearest profile wins, then the template first by name.
   */
  async templatesForProfile(profileId: string): Promise<TemplateItem[]> {
    return (await this.templatesForProfiles([profileId])).get(profileId) ?? [];
  }

  /** templatesForProfile for many profiles in one query (building a poller's assignment). */
  async templatesForProfiles(profileIds: readonly string[]): Promise<Map<string, TemplateItem[]>> {
    const ids = [...new Set(profileIds.filter(isUuid))];
    const out = new Map<string, TemplateItem[]>(ids.map((id) => [id, []]));
    const seen = new Map<string, Set<string>>();
    for (const r of await this.repo.enabledItemsOfProfiles(ids)) {
      let names = seen.get(r.profile_id);
      if (!names) seen.set(r.profile_id, (names = new Set()));
      if (names.has(r.metric_name)) continue;
      names.add(r.metric_name);
      out.get(r.profile_id)?.push(toTemplateItem(r));
    }
    return out;
  }

  /** Checks what the schema cannot say and normalises the OID (no leading dot). */
  private itemRow(body: CollectionTemplateItemBody): ItemRow {
    if (RAW_COUNTER_METRICS.has(body.metric_name) || BUILT_IN_METRICS.has(body.metric_name)) {
      throw badRequest("reserved_metric_name", "metric_name is a built-in metric or raw counter name; choose another.");
    }
    const oid = body.oid.replace(/^\./, "");
    const parts = oid.split(".");
    if (parts.length > MAX_SUBIDS || parts.some((p) => p.length > 10 || Number(p) > MAX_SUBID)) {
      throw badRequest("validation_failed", `Invalid request body: "oid" must have at most ${MAX_SUBIDS} components, each at most ${MAX_SUBID}.`);
    }
    return { collection: body.collection, metric_kind: body.metric_kind, metric_name: body.metric_name, oid, enabled: body.enabled ?? true };
  }

  /** Maps unique violations to 409 and a vanished template (foreign key) to 404. */
  private async write<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) {
        if (pgConstraint(err) === "collection_templates_name_key") throw conflict("name_taken", "A collection template with this name exists already.");
        throw conflict("metric_name_taken", "The template has an item with this metric_name already.");
      }
      if (isPgError(err, PG_ERROR.foreignKeyViolation)) throw noTemplate();
      throw err;
    }
  }
}

function toTemplateItem(r: ProfileItemRow): TemplateItem {
  return { id: r.id, metric_name: r.metric_name, metric_kind: r.metric_kind, oid: r.oid, collection: r.collection };
}
