import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isRfc3339, isUuid, notFound, page } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { EVENTS_CONTEXT, type EventsContext } from "../context.js";
import type { EventRuleBody, EventRuleView } from "../models/RuleModels.js";
import { RuleRepository, type RuleWrite } from "../repositories/RuleRepository.js";
import { SourceRepository } from "../repositories/SourceRepository.js";
import { compileRule } from "../rules/compile.js";
import { RULE_BOUNDS } from "../rules/vocab.js";
import { EventPipeline } from "./EventPipeline.js";

const noRule = () => notFound("No such event rule.");

/** Event rules: checked (patterns compile for their match kind, references exist), stored, and handed to the pipeline. */
@Injectable()
export class RuleService {
  @Inject(EVENTS_CONTEXT)
  private ctx: EventsContext;

  @Inject(RuleRepository)
  private repo: RuleRepository;

  @Inject(SourceRepository)
  private sources: SourceRepository;

  @Inject(EventPipeline)
  private pipeline: EventPipeline;

  async create(body: EventRuleBody): Promise<string> {
    const id = await this.repo.insert(await this.checked(body));
    await this.changed();
    return id;
  }

  async list(limit: number, cursor?: string): Promise<{ rows: EventRuleView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;
    return page(await this.repo.list(limit, after), limit, (r) => [r.created_at, r.id]);
  }

  async get(id: string): Promise<EventRuleView> {
    const rule = isUuid(id) ? await this.repo.get(id) : null;
    if (!rule) throw noRule();
    return rule;
  }

  async replace(id: string, body: EventRuleBody): Promise<EventRuleView> {
    const rule = await this.checked(body);
    if (!isUuid(id) || !(await this.repo.update(id, rule))) throw noRule();
    await this.changed();
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    if (!isUuid(id) || !(await this.repo.remove(id))) throw noRule();
    await this.changed();
  }

  private async changed(): Promise<void> {
    if (this.pipeline.isRunning) await this.pipeline.reloadRules();
  }

  private async checked(body: EventRuleBody): Promise<RuleWrite> {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be empty.");
    const compiled = compileRule(body);
    if (!compiled.ok) throw badRequest("validation_failed", `${compiled.field}: ${compiled.message}`);
    const nodeId = body.node_id?.toLowerCase() ?? null;
    const sourceId = body.source_id?.toLowerCase() ?? null;
    if (nodeId) {
      const { rowCount } = await this.ctx.store.query(`SELECT 1 FROM ${NODE_DIRECTORY_VIEW} WHERE id = $1`, [nodeId]);
      if (!rowCount) throw badRequest("unknown_reference", "node_id names no node.");
    }
    if (sourceId && !(await this.sources.get(sourceId))) throw badRequest("unknown_reference", "source_id names no event source.");
    return {
      name,
      pattern: body.pattern,
      match_kind: body.match_kind,
      severity: body.severity,
      clear_pattern: body.clear_pattern ?? null,
      enabled: body.enabled ?? true,
      min_count: body.min_count ?? RULE_BOUNDS.min_count.default,
      window_secs: body.window_secs ?? RULE_BOUNDS.window_secs.default,
      ttl_secs: body.ttl_secs ?? null,
      node_id: nodeId,
      source_id: sourceId,
      source_kind: body.source_kind ?? null,
    };
  }
}
