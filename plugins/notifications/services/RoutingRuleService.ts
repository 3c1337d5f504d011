import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isRfc3339, isUuid, notFound, page } from "../../../core/index.js";
import type { RoutingRuleBody, RoutingRuleView } from "../models/RoutingRuleModels.js";
import { ChannelRepository } from "../repositories/ChannelRepository.js";
import { RoutingRuleRepository, type RuleWrite } from "../repositories/RoutingRuleRepository.js";

const noRule = () => notFound("No such routing rule.");

/** Routing rules: which channels an alert of a severity (null = any), of a node in some folders (none = any), goes to. */
@Injectable()
export class RoutingRuleService {
  @Inject(RoutingRuleRepository)
  private repo: RoutingRuleRepository;

  @Inject(ChannelRepository)
  private channels: ChannelRepository;

  async create(body: RoutingRuleBody): Promise<string> {
    return this.repo.insert(await this.checked(body));
  }

  async list(limit: number, cursor?: string): Promise<{ rows: RoutingRuleView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) as [string, string]) : null;
    return page(await this.repo.list(limit, after), limit, (r) => [r.created_at, r.id]);
  }

  async get(id: string): Promise<RoutingRuleView> {
    const rule = isUuid(id) ? await this.repo.get(id) : null;
    if (!rule) throw noRule();
    return rule;
  }

  async replace(id: string, body: RoutingRuleBody): Promise<RoutingRuleView> {
    const rule = await this.checked(body);
    if (!isUuid(id) || !(await this.repo.update(id, rule))) throw noRule();
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    if (!isUuid(id) || !(await this.repo.remove(id))) throw noRule();
  }

  private async checked(body: RoutingRuleBody): Promise<RuleWrite> {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be empty.");
    const ids = body.channel_ids.map((id) => id.toLowerCase());
    const missing = await this.channels.missing(ids);
    if (missing.length) throw badRequest("unknown_reference", `channel_ids names no channel: ${missing.join(", ")}.`);
    const folders = (body.folder_ids ?? []).map((id) => id.toLowerCase());
    const unknown = await this.repo.missingFolders(folders);
    if (unknown.length) throw badRequest("unknown_reference", `folder_ids names no folder: ${unknown.join(", ")}.`);
    return {
      name,
      severity: body.severity ?? null,
      channel_ids: ids,
      enabled: body.enabled ?? true,
      folder_ids: folders,
      root_cause_only: body.root_cause_only ?? false,
    };
  }
}
