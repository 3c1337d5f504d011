// notes/services/NoteService.ts
import { badRequest, isoTimestamp, type Scope, scopeCovers, scopeFolders } from "nms-core";
import { NODE_DIRECTORY_VIEW, type NodeDirectoryRow } from "nms-core/contracts/inventory";
import { Inject, Injectable } from "nms-core/tsed";
import { NOTES_CONTEXT, type NotesContext } from "./context.js";
import type { NoteCreate, NoteView } from "./NoteModels.js";

declare module "nms-core/bus" {
  interface BusEvents {
    "notes.created": { id: string; node_id: string | null };
  }
}

@Injectable()
export class NoteService {
  @Inject(NOTES_CONTEXT)
  private ctx: NotesContext;

  /** The latest notes on nodes `scope` covers (inventory publishes each node's folder path in its view). */
  async list(scope: Scope): Promise<NoteView[]> {
    const { rows } = await this.ctx.store.query<NoteView>(
      `SELECT n.id, n.text, n.node_id, ${isoTimestamp("n.created_at")} AS created_at
         FROM ${this.ctx.store.table("notes")} n
         LEFT JOIN ${NODE_DIRECTORY_VIEW} d ON d.id = n.node_id
        WHERE $1::uuid[] IS NULL OR d.folder_path && $1::uuid[]
        ORDER BY n.created_at DESC, n.id DESC LIMIT $2`,
      [scopeFolders(scope), this.ctx.config.pageSize],
    );
    return rows;
  }

  async create(body: NoteCreate, scope: Scope): Promise<string> {
    const node = body.node_id ? await this.node(body.node_id, scope) : null;
    if (body.node_id && !node) throw badRequest("unknown_reference", "node_id names no node you can see.");
    const { rows } = await this.ctx.store.query<{ id: string }>(`INSERT INTO ${this.ctx.store.table("notes")} (text, node_id) VALUES ($1, $2) RETURNING id`, [
      body.text,
      node?.id ?? null,
    ]);
    const id = rows[0].id;
    await this.ctx.bus.emit("notes.created", { id, node_id: node?.id ?? null });
    // Socket.IO: event "notes.created" on channel "notes.live", to sockets whose scope covers the node's folder.
    this.ctx.realtime.publish("live", "created", { id, text: body.text }, { folders: node?.folder_path ?? [] });
    return id;
  }

  /** A node, from the view inventory publishes for other plugins (never from its tables), if `scope` covers it. */
  private async node(id: string, scope: Scope): Promise<Pick<NodeDirectoryRow, "id" | "folder_path"> | null> {
    const { rows } = await this.ctx.store.query<Pick<NodeDirectoryRow, "id" | "folder_path">>(
      `SELECT id, folder_path FROM ${NODE_DIRECTORY_VIEW} WHERE id = $1`,
      [id],
    );
    return rows.find((n) => scopeCovers(scope, n.folder_path)) ?? null;
  }

  async prune(): Promise<number> {
    const { rowCount } = await this.ctx.store.query(`DELETE FROM ${this.ctx.store.table("notes")} WHERE created_at < now() - make_interval(days => $1)`, [
      this.ctx.config.keepDays,
    ]);
    return rowCount ?? 0;
  }
}
