import { Inject, Injectable } from "@tsed/di";
import { badRequest, parseRfc3339, type Scope, scopeFolders, timestampParam, tokenList } from "../../../core/index.js";
import { NODE_STATES, SEVERITIES } from "../models/AlertModels.js";
import type { AlertHistoryRow, AlertTransitionView, CalendarBucket, HistoryFilter, HistoryQuery, TopAlertNodes } from "../models/HistoryModels.js";
import { HistoryRepository } from "../repositories/HistoryRepository.js";
import { ActiveAlertService } from "./ActiveAlertService.js";

/** Alert history and what is derived from it (calendar, top nodes, transitions), through the caller's folder scope. */
@Injectable()
export class HistoryService {
  @Inject(HistoryRepository)
  private repo: HistoryRepository;

  @Inject(ActiveAlertService)
  private active: ActiveAlertService;

  async history(query: HistoryQuery, scope: Scope): Promise<AlertHistoryRow[]> {
    if (query.before_id !== undefined && query.before === undefined) throw badRequest("validation_failed", "before_id needs before.");
    const before = timestampParam("before", query.before);
    const since = timestampParam("since", query.since);
    const until = timestampParam("until", query.until);
    if (since !== null && until !== null && parseRfc3339(since)!.us > parseRfc3339(until)!.us) {
      throw badRequest("validation_failed", "since must not be after until.");
    }
    const filter: HistoryFilter = {
      limit: query.limit,
      before: before === null ? null : { at: before, id: query.before_id?.toLowerCase() ?? null },
      since,
      until,
      severities: tokenList("severity", query.severity, SEVERITIES),
      states: tokenList("state", query.state, NODE_STATES),
      resolved: query.resolved === undefined ? null : query.resolved === "true",
      acked: query.acked === undefined ? null : query.acked === "true",
      metric: query.metric === undefined || query.metric === "" ? null : query.metric,
      nodeId: query.node_id?.toLowerCase() ?? null,
      nodeQ: query.node_q === undefined || query.node_q === "" ? null : query.node_q,
      groupId: query.group_id?.toLowerCase() ?? null,
    };
    await this.assertFilterTargets(filter, scope);
    const nodes = await this.nodeSet(scope, filter.groupId, filter.nodeQ);
    if (nodes !== null && nodes.length === 0) return [];
    return this.repo.page(filter, nodes);
  }

  async calendar(days: number, scope: Scope): Promise<CalendarBucket[]> {
    const nodes = await this.nodeSet(scope, null, null);
    if (nodes !== null && nodes.length === 0) return [];
    return this.repo.calendar(days, nodes);
  }

  async topNodes(windowSecs: number, limit: number, scope: Scope): Promise<TopAlertNodes> {
    const entries = await this.repo.topNodes(windowSecs, limit, scopeFolders(scope));
    // A folder-scoped caller may be entitled to nodes it cannot see here; never for scope All.
    return { entries, partial: scope !== "All" };
  }

  async transitions(limit: number, scope: Scope): Promise<AlertTransitionView[]> {
    const nodes = await this.nodeSet(scope, null, null);
    if (nodes !== null && nodes.length === 0) return [];
    return this.repo.transitions(limit, nodes);
  }

  /** The nodes the scope and the inventory filters leave (null: no such restriction, every subject's rows). */
  private async nodeSet(scope: Scope, groupId: string | null, nodeQ: string | null): Promise<string[] | null> {
    if (scope === "All" && groupId === null && nodeQ === null) return null;
    return this.repo.directoryNodes({ scopeFolders: scopeFolders(scope), groupId, nodeQ });
  }

  /**
   * node_id and group_id outside the scope are 404. With scope All history outlives its nodes: a node_id that no
   * longer exists still reads its rows, and a folder no node is filed beneath matches nothing.
   */
  private async assertFilterTargets(filter: HistoryFilter, scope: Scope): Promise<void> {
    if (scope === "All") return;
    if (filter.nodeId !== null) await this.active.assertNodeVisible(filter.nodeId, scope);
    if (filter.groupId !== null) await this.active.assertFolderVisible(filter.groupId, scope);
  }
}
