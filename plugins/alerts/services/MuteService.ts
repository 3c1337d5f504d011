import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page, parseRfc3339, requireCaller, type Scope, scopeCovers, scopeFolders } from "../../../core/index.js";
import type { BulkMuteRequest, BulkMuteResult, MuteUpdate, MuteView } from "../models/MuteModels.js";
import { MuteRepository } from "../repositories/MuteRepository.js";
import { ActiveAlertService } from "./ActiveAlertService.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

/**
 * Mutes: a node's metric muted until a time. The engine still records the metric's transitions in history
 * but suppresses their notifications (alerts.suppressed with reason "mute").
 */
@Injectable()
export class MuteService {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(MuteRepository)
  private repo: MuteRepository;

  @Inject(ActiveAlertService)
  private active: ActiveAlertService;

  async bulk(body: BulkMuteRequest, scope: Scope): Promise<BulkMuteResult> {
    const max = this.ctx.config.bulkMuteMax;
    if (body.node_ids.length > max) throw badRequest("validation_failed", `node_ids carries more than ${max} ids.`);
    const until = parseRfc3339(body.until);
    if (!until) throw badRequest("validation_failed", "until must be an RFC 3339 timestamp.");
    if (until.ms <= Date.now()) throw badRequest("validation_failed", "until must be in the future.");
    const ids = [...new Set(body.node_ids.map((id) => id.toLowerCase()))];
    if (!ids.length) return { created: 0, requested: 0 };
    const created = await this.repo.insertForVisibleNodes(
      { nodeIds: ids, metricName: body.metric_name, reason: body.reason, until: until.text, createdBy: requireCaller().username },
      scopeFolders(scope),
    );
    return { created, requested: ids.length };
  }

  async list(
    query: { node_id?: string; metric_name?: string; cursor?: string; limit: number },
    scope: Scope,
  ): Promise<{ rows: MuteView[]; next: string | null }> {
    let before: { at: string; id: string } | null = null;
    if (query.cursor !== undefined) {
      const [at, id] = decodeCursor(query.cursor, 2, ([first, last]) => parseRfc3339(first) !== null && isUuid(last));
      before = { at, id };
    }
    // Like the history filter: a node outside a folder-scoped caller's scope is 404.
    if (query.node_id !== undefined && scope !== "All") await this.active.assertNodeVisible(query.node_id, scope);
    const rows = await this.repo.listActive(
      { nodeId: query.node_id ?? null, metricName: query.metric_name === undefined || query.metric_name === "" ? null : query.metric_name },
      scopeFolders(scope),
      before,
      query.limit,
    );
    const paged = page(rows, query.limit, (r) => [r.created_at_key, r.id]);
    return { rows: paged.rows.map(({ created_at_key: _k, ...row }) => row), next: paged.next };
  }

  /** 404 when missing, or (folder-scoped caller) when its node is gone or outside the scope. */
  async remove(id: string, scope: Scope): Promise<void> {
    await this.assertVisible(id, scope);
    if (!(await this.repo.delete(id))) throw notFound("No such mute.");
  }

  /** Moves a mute's end (into the future) and/or changes its reason; an ended mute can be extended again. */
  async update(id: string, body: MuteUpdate, scope: Scope): Promise<MuteView> {
    if (body.until === undefined && body.reason === undefined) throw badRequest("validation_failed", "Send until, reason or both.");
    let until: string | null = null;
    if (body.until !== undefined) {
      const parsed = parseRfc3339(body.until);
      if (!parsed) throw badRequest("validation_failed", "until must be an RFC 3339 timestamp.");
      if (parsed.ms <= Date.now()) throw badRequest("validation_failed", "until must be in the future.");
      until = parsed.text;
    }
    if (body.reason !== undefined && !body.reason.trim()) throw badRequest("validation_failed", "reason must hold a non-blank character.");
    await this.assertVisible(id, scope);
    if (!(await this.repo.update(id, until, body.reason ?? null))) throw notFound("No such mute.");
    return (await this.repo.findView(id))!;
  }

  private async assertVisible(id: string, scope: Scope): Promise<void> {
    const found = await this.repo.findNodePath(id);
    if (!found || (scope !== "All" && (found.folder_path === null || !scopeCovers(scope, found.folder_path)))) throw notFound("No such mute.");
  }
}
