import { createHash, randomBytes } from "node:crypto";
import { Inject, Injectable } from "@tsed/di";
import { badRequest, conflict, decodeCursor, isPgError, isRfc3339, isUuid, notFound, page, PG_ERROR, pgConstraint } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { EventSourceBody, EventSourceUpdate, EventSourceView } from "../models/SourceModels.js";
import { SourceRepository } from "../repositories/SourceRepository.js";
import { EventPipeline } from "./EventPipeline.js";

const noSource = () => notFound("No such event source.");

/** Ingest tokens: a prefix that says what they are, then 32 random bytes. Only a hash is looked up; the token itself is sealed. */
const TOKEN_PREFIX = "nmsev_";
export const hashIngestToken = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * Event sources: the built-in catch-alls of the listener streams, per-node syslog/trap sources (a
 * disabled one drops what that node sends), and HTTP ingest sources with their own token.
 */
@Injectable()
export class SourceService {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Inject(SourceRepository)
  private repo: SourceRepository;

  @Inject(EventPipeline)
  private pipeline: EventPipeline;

  async create(body: EventSourceBody): Promise<{ id: string; token?: string }> {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be empty.");
    const nodeId = body.node_id?.toLowerCase() ?? null;
    if (body.kind !== "http" && !nodeId)
      throw badRequest("validation_failed", "node_id is required for a syslog or trap source (the catch-all ones are built in).");
    await this.checkNode(nodeId);
    const token = body.kind === "http" ? this.newToken() : null;
    const id = await this.unique(() => this.repo.insert({ kind: body.kind, name, node_id: nodeId, enabled: body.enabled ?? true }, token?.stored ?? null));
    await this.changed();
    return token ? { id, token: token.text } : { id };
  }

  async list(limit: number, cursor?: string): Promise<{ rows: EventSourceView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;
    return page(await this.repo.list(limit, after), limit, (r) => [r.created_at, r.id]);
  }

  async get(id: string): Promise<EventSourceView> {
    const s = isUuid(id) ? await this.repo.get(id) : null;
    if (!s) throw noSource();
    return s;
  }

  async update(id: string, body: EventSourceUpdate): Promise<EventSourceView> {
    const current = await this.get(id);
    const name = body.name === undefined ? current.name : body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be empty.");
    const nodeId = body.node_id === undefined ? current.node_id : (body.node_id?.toLowerCase() ?? null);
    if (current.builtin && nodeId !== null) throw badRequest("validation_failed", "A built-in source takes every sender: it names no node.");
    if (!current.builtin && current.kind !== "http" && !nodeId) throw badRequest("validation_failed", "node_id is required for a syslog or trap source.");
    if (nodeId !== current.node_id) await this.checkNode(nodeId);
    await this.unique(() => this.repo.update(current.id, { name, node_id: nodeId, enabled: body.enabled ?? current.enabled }));
    await this.changed();
    return this.get(id);
  }

  /** A new token for an http source (the old one stops working at once). */
  async rotate(id: string): Promise<string> {
    const current = await this.get(id);
    if (current.kind !== "http") throw badRequest("validation_failed", "Only http sources have an ingest token.");
    const token = this.newToken();
    await this.repo.setToken(current.id, token.stored);
    return token.text;
  }

  async remove(id: string): Promise<void> {
    const current = await this.get(id);
    if (current.builtin) throw conflict("source_builtin", "A built-in source cannot be deleted (disable it instead).");
    try {
      if (!(await this.repo.remove(current.id))) throw noSource();
    } catch (err) {
      if (isPgError(err, PG_ERROR.restrictViolation) || isPgError(err, PG_ERROR.foreignKeyViolation))
        throw conflict("source_in_use", "An event rule names this source: change or delete the rule first.");
      throw err;
    }
    await this.changed();
  }

  /** The enabled http source a token belongs to, or null. */
  async byToken(token: string): Promise<EventSourceView | null> {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    return this.repo.byTokenHash(hashIngestToken(token));
  }

  private newToken(): { text: string; stored: { hash: string; sealed: string } } {
    const text = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
    return { text, stored: { hash: hashIngestToken(text), sealed: this.ctx.secrets.seal(text) } };
  }

  private async checkNode(nodeId: string | null): Promise<void> {
    if (!nodeId) return;
    const { rowCount } = await this.ctx.store.query(`SELECT 1 FROM ${NODE_DIRECTORY_VIEW} WHERE id = $1`, [nodeId]);
    if (!rowCount) throw badRequest("unknown_reference", "node_id names no node.");
  }

  private async unique<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) {
        const which = pgConstraint(err);
        if (which === "sources_node_kind") throw conflict("source_exists", "That node already has a source of this kind.");
        throw conflict("name_taken", "An event source with this name exists.");
      }
      throw err;
    }
  }

  private async changed(): Promise<void> {
    if (this.pipeline.isRunning) await this.pipeline.reloadSources();
  }
}
