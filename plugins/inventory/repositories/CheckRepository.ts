import { Inject, Injectable } from "@tsed/di";
import { isoTimestamp, type Queryable } from "../../../core/index.js";
import type { DnsCheckView, UrlCheckView } from "../models/CheckModels.js";
import { INVENTORY_CONTEXT, type InventoryContext } from "../context.js";

/** A URL check row as written: every field resolved (defaults applied, path normalised). */
export type UrlCheckRecord = Omit<UrlCheckView, "node_id" | "created_at" | "updated_at">;
export type DnsCheckRecord = Omit<DnsCheckView, "node_id" | "created_at" | "updated_at">;

const TS = (col: string) => `${isoTimestamp(col)} AS ${col}`;

const URL_COLUMNS = `node_id, url, method, timeout_ms, follow_redirects, verify_tls, expected_status, body_match, body_max_bytes, json_extract, credential_id,
  ${TS("created_at")}, ${TS("updated_at")}`;

const DNS_COLUMNS = `node_id, name, record_type, host(resolver_ip) AS resolver_ip, resolver_port, timeout_ms, max_depth, ${TS("created_at")}, ${TS("updated_at")}`;

/** SQL for inventory.url_checks and inventory.dns_checks (one row per node). */
@Injectable()
export class CheckRepository {
  @Inject(INVENTORY_CONTEXT)
  private ctx: InventoryContext;

  async findUrlCheck(nodeId: string, db: Queryable = this.ctx.store): Promise<UrlCheckView | undefined> {
    const { rows } = await db.query<UrlCheckView>(`SELECT ${URL_COLUMNS} FROM inventory.url_checks WHERE node_id = $1`, [nodeId]);
    return rows[0];
  }

  /** Insert or replace; created_at survives a replace. */
  async upsertUrlCheck(nodeId: string, c: UrlCheckRecord, db: Queryable = this.ctx.store): Promise<UrlCheckView> {
    const { rows } = await db.query<UrlCheckView>(
      `INSERT INTO inventory.url_checks AS u
              (node_id, url, method, timeout_ms, follow_redirects, verify_tls, expected_status, body_match, body_max_bytes, json_extract, credential_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10::jsonb, $11)
       ON CONFLICT (node_id) DO UPDATE SET
              url = EXCLUDED.url, method = EXCLUDED.method, timeout_ms = EXCLUDED.timeout_ms, follow_redirects = EXCLUDED.follow_redirects,
              verify_tls = EXCLUDED.verify_tls, expected_status = EXCLUDED.expected_status, body_match = EXCLUDED.body_match,
              body_max_bytes = EXCLUDED.body_max_bytes, json_extract = EXCLUDED.json_extract, credential_id = EXCLUDED.credential_id,
              updated_at = now()
       RETURNING ${URL_COLUMNS}`,
      [
        nodeId,
        c.url,
        c.method,
        c.timeout_ms,
        c.follow_redirects,
        c.verify_tls,
        JSON.stringify(c.expected_status),
        c.body_match === null ? null : JSON.stringify(c.body_match),
        c.body_max_bytes,
        JSON.stringify(c.json_extract),
        c.credential_id,
      ],
    );
    return rows[0];
  }

  /** true when a row was deleted. */
  async deleteUrlCheck(nodeId: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM inventory.url_checks WHERE node_id = $1", [nodeId]);
    return (rowCount ?? 0) > 0;
  }

  /** The credential's kind, locked against deletion until the transaction ends; undefined when none has the id. */
  async lockCredentialKind(id: string, db: Queryable): Promise<string | undefined> {
    const { rows } = await db.query<{ kind: string }>("SELECT kind FROM inventory.credentials WHERE id = $1 FOR KEY SHARE", [id]);
    return rows[0]?.kind;
  }

  /** Locks the node row against deletion until the transaction ends; false when there is none. */
  async lockNode(id: string, db: Queryable): Promise<boolean> {
    const { rows } = await db.query("SELECT 1 FROM inventory.nodes WHERE id = $1 FOR KEY SHARE", [id]);
    return rows.length > 0;
  }

  async findDnsCheck(nodeId: string, db: Queryable = this.ctx.store): Promise<DnsCheckView | undefined> {
    const { rows } = await db.query<DnsCheckView>(`SELECT ${DNS_COLUMNS} FROM inventory.dns_checks WHERE node_id = $1`, [nodeId]);
    return rows[0];
  }

  async upsertDnsCheck(nodeId: string, c: DnsCheckRecord, db: Queryable = this.ctx.store): Promise<DnsCheckView> {
    const { rows } = await db.query<DnsCheckView>(
      `INSERT INTO inventory.dns_checks AS d (node_id, name, record_type, resolver_ip, resolver_port, timeout_ms, max_depth)
       VALUES ($1, $2, $3, $4::inet, $5, $6, $7)
       ON CONFLICT (node_id) DO UPDATE SET
              name = EXCLUDED.name, record_type = EXCLUDED.record_type, resolver_ip = EXCLUDED.resolver_ip,
              resolver_port = EXCLUDED.resolver_port, timeout_ms = EXCLUDED.timeout_ms, max_depth = EXCLUDED.max_depth, updated_at = now()
       RETURNING ${DNS_COLUMNS}`,
      [nodeId, c.name, c.record_type, c.resolver_ip, c.resolver_port, c.timeout_ms, c.max_depth],
    );
    return rows[0];
  }

  async deleteDnsCheck(nodeId: string, db: Queryable = this.ctx.store): Promise<boolean> {
    const { rowCount } = await db.query("DELETE FROM inventory.dns_checks WHERE node_id = $1", [nodeId]);
    return (rowCount ?? 0) > 0;
  }
}
