import { Inject, Injectable } from "@tsed/di";
import { type Queryable } from "../../../core/index.js";
import type { CollectionTemplateItemView, CollectionTemplateView } from "../models/CollectionTemplateModels.js";
import { PROFILE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { POLLING_CONTEXT, type PollingContext } from "../context.js";

export interface TemplateRow {
  name: string;
  description: string | null;
}

export type ItemRow = Omit<CollectionTemplateItemView, "id" | "template_id">;

/** An enabled item of a template a profile uses. */
export interface ProfileItemRow extends CollectionTemplateItemView {
  profile_id: string;
  template_name: string;
}

const ITEM_COLUMNS = "id, template_id, collection, metric_kind, metric_name, oid, enabled";

/** SQL for polling.collection_templates, collection_template_items and profile_collection_templates. */
@Injectable()
export class CollectionTemplateRepository {
  @Inject(POLLING_CONTEXT)
  private ctx: PollingContext;

  private get t() {
    return {
      templates: this.ctx.store.table("collection_templates"),
      items: this.ctx.store.table("collection_template_items"),
      links: this.ctx.store.table("profile_collection_templates"),
    };
  }

  /** The template view columns (item count and profiles), for rows of `tpl`. */
  private viewSelect(): string {
    const { items, links } = this.t;
    return `tpl.id, tpl.name, tpl.description,
            (SELECT count(*)::int FROM ${items} i WHERE i.template_id = tpl.id) AS item_count,
            COALESCE((SELECT array_agg(l.profile_id::text ORDER BY l.profile_id) FROM ${links} l WHERE l.template_id = tpl.id), '{}') AS profile_ids`;
  }

  /** Up to `limit` templates after the keyset (lower(name), id), by name. */
  async list(limit: number, after: { key: string; id: string } | null): Promise<(CollectionTemplateView & { name_key: string })[]> {
    const { rows } = await this.ctx.store.query<CollectionTemplateView & { name_key: string }>(
      `SELECT ${this.viewSelect()}, lower(tpl.name) AS name_key FROM ${this.t.templates} tpl
        WHERE $1::text IS NULL OR (lower(tpl.name), tpl.id) > ($1::text, $2::uuid)
        ORDER BY lower(tpl.name), tpl.id LIMIT $3`,
      [after?.key ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  async get(id: string, db: Queryable = this.ctx.store): Promise<CollectionTemplateView | null> {
    const { rows } = await db.query<CollectionTemplateView>(`SELECT ${this.viewSelect()} FROM ${this.t.templates} tpl WHERE tpl.id = $1`, [id]);
    return rows[0] ?? null;
  }

  async exists(id: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rows } = await db.query(`SELECT 1 FROM ${this.t.templates} WHERE id = $1`, [id]);
    return rows.length > 0;
  }

  async insert(row: TemplateRow): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(`INSERT INTO ${this.t.templates} (name, description) VALUES ($1, $2) RETURNING id`, [
      row.name,
      row.description,
    ]);
    return rows[0].id;
  }

  /** True when a template with this id was updated. */
  async update(id: string, row: TemplateRow): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`UPDATE ${this.t.templates} SET name = $2, description = $3, updated_at = now() WHERE id = $1`, [
      id,
      row.name,
      row.description,
    ]);
    return (rowCount ?? 0) > 0;
  }

  /** Deletes a template (and its items); the profile links hold it back (foreign key, RESTRICT). */
  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t.templates} WHERE id = $1`, [id]);
    return (rowCount ?? 0) > 0;
  }

  // ---- items ----

  /** Up to `limit` items of a template after the keyset metric_name (unique within a template). */
  async listItems(templateId: string, limit: number, afterName: string | null): Promise<CollectionTemplateItemView[]> {
    const { rows } = await this.ctx.store.query<CollectionTemplateItemView>(
      `SELECT ${ITEM_COLUMNS} FROM ${this.t.items}
        WHERE template_id = $1 AND ($2::text IS NULL OR metric_name > $2::text)
        ORDER BY metric_name LIMIT $3`,
      [templateId, afterName, limit],
    );
    return rows;
  }

  async getItem(templateId: string, itemId: string): Promise<CollectionTemplateItemView | null> {
    const { rows } = await this.ctx.store.query<CollectionTemplateItemView>(`SELECT ${ITEM_COLUMNS} FROM ${this.t.items} WHERE template_id = $1 AND id = $2`, [
      templateId,
      itemId,
    ]);
    return rows[0] ?? null;
  }

  async insertItem(templateId: string, row: ItemRow): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(
      `INSERT INTO ${this.t.items} (template_id, collection, metric_kind, metric_name, oid, enabled) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [templateId, row.collection, row.metric_kind, row.metric_name, row.oid, row.enabled],
    );
    return rows[0].id;
  }

  async updateItem(templateId: string, itemId: string, row: ItemRow): Promise<CollectionTemplateItemView | null> {
    const { rows } = await this.ctx.store.query<CollectionTemplateItemView>(
      `UPDATE ${this.t.items} SET collection = $3, metric_kind = $4, metric_name = $5, oid = $6, enabled = $7, updated_at = now()
        WHERE template_id = $1 AND id = $2 RETURNING ${ITEM_COLUMNS}`,
      [templateId, itemId, row.collection, row.metric_kind, row.metric_name, row.oid, row.enabled],
    );
    return rows[0] ?? null;
  }

  async deleteItem(templateId: string, itemId: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t.items} WHERE template_id = $1 AND id = $2`, [templateId, itemId]);
    return (rowCount ?? 0) > 0;
  }

  // ---- profile links ----

  /** Links a profile to a template; repeating it changes nothing. */
  async attach(profileId: string, templateId: string): Promise<void> {
    await this.ctx.store.query(`INSERT INTO ${this.t.links} (profile_id, template_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [profileId, templateId]);
  }

  async detach(profileId: string, templateId: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t.links} WHERE profile_id = $1 AND template_id = $2`, [profileId, templateId]);
    return (rowCount ?? 0) > 0;
  }

  /** Templates a profile uses, by name. */
  async templatesOfProfile(profileId: string): Promise<CollectionTemplateView[]> {
    const { rows } = await this.ctx.store.query<CollectionTemplateView>(
      `SELECT ${this.viewSelect()} FROM ${this.t.templates} tpl
        WHERE tpl.id IN (SELECT template_id FROM ${this.t.links} WHERE profile_id = $1)
        ORDER BY lower(tpl.name), tpl.id`,
      [profileId],
    );
    return rows;
  }

  /**
   * Enabled items of the templates these profiles use, themselves or through an ancestor profile
   * (inventory's published profile_directory): by profile, nearest profile first, template name, metric name.
   * Links of a profile that no longer exists are never read.
   */
  async enabledItemsOfProfiles(profileIds: string[]): Promise<ProfileItemRow[]> {
    if (profileIds.length === 0) return [];
    const { rows } = await this.ctx.store.query<ProfileItemRow>(
      `SELECT d.id AS profile_id, tpl.name AS template_name, i.id, i.template_id, i.collection, i.metric_kind, i.metric_name, i.oid, i.enabled
         FROM ${PROFILE_DIRECTORY_VIEW} d
         JOIN ${this.t.links} l ON l.profile_id = ANY(d.ancestors)
         JOIN ${this.t.templates} tpl ON tpl.id = l.template_id
         JOIN ${this.t.items} i ON i.template_id = tpl.id AND i.enabled
        WHERE d.id = ANY($1::uuid[])
        ORDER BY d.id, array_position(d.ancestors, l.profile_id), lower(tpl.name), tpl.id, i.metric_name`,
      [profileIds],
    );
    return rows;
  }

  async profileExists(profileId: string): Promise<boolean> {
    const { rows } = await this.ctx.store.query(`SELECT 1 FROM ${PROFILE_DIRECTORY_VIEW} WHERE id = $1`, [profileId]);
    return rows.length > 0;
  }
}
