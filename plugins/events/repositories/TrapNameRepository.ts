import { Inject, Injectable } from "@tsed/di";
import { isPgError, PG_ERROR } from "../../../core/index.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";

export interface TrapNameRow {
  id: string;
  oid: string;
  name: string;
  kind: "notification" | "object";
  description: string | null;
}
export type TrapNameWrite = Omit<TrapNameRow, "id">;

/** SQL only: the names users gave to OIDs (events.trap_names). */
@Injectable()
export class TrapNameRepository {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  private get t() {
    return this.ctx.store.table("trap_names");
  }

  async all(): Promise<TrapNameRow[]> {
    return (await this.ctx.store.query<TrapNameRow>(`SELECT id, oid, name, kind, description FROM ${this.t} ORDER BY oid`)).rows;
  }

  /** The new id, or null when the OID has a row already. */
  async insert(w: TrapNameWrite): Promise<string | null> {
    try {
      const { rows } = await this.ctx.store.query<{ id: string }>(`INSERT INTO ${this.t} (oid, name, kind, description) VALUES ($1, $2, $3, $4) RETURNING id`, [
        w.oid,
        w.name,
        w.kind,
        w.description,
      ]);
      return rows[0].id;
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) return null;
      throw err;
    }
  }

  /** true = replaced, false = no such row; "duplicate" when another row has that OID. */
  async update(id: string, w: TrapNameWrite): Promise<boolean | "duplicate"> {
    try {
      const { rowCount } = await this.ctx.store.query(
        `UPDATE ${this.t} SET oid = $2, name = $3, kind = $4, description = $5, updated_at = now() WHERE id = $1`,
        [id, w.oid, w.name, w.kind, w.description],
      );
      return Boolean(rowCount);
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) return "duplicate";
      throw err;
    }
  }

  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.t} WHERE id = $1`, [id]);
    return Boolean(rowCount);
  }
}
