import { Inject, Injectable } from "@tsed/di";
import { badRequest, conflict, decodeCursor, isPgError, isUuid, notFound, page, PG_ERROR } from "../../../core/index.js";
import type { AlertTransition } from "../../alerts/contract.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import { LIFECYCLE_POINTS, type ChannelForSend, type ChannelKind, type TemplateItem } from "../contract.js";
import { checkTemplate } from "../lib/render.js";
import type { ChannelCreate, ChannelPatch, ChannelTemplate, ChannelView } from "../models/ChannelModels.js";
import { ChannelRepository, type ChannelRow } from "../repositories/ChannelRepository.js";
import { KindRegistry } from "./KindRegistry.js";

const nameTaken = () => conflict("name_taken", "A channel with this name already exists (names are compared case-insensitively).");
const noChannel = () => notFound("No such notification channel.");

/** Channels: config checked by their kind, secrets sealed apart and never answered, templates checked when saved. */
@Injectable()
export class ChannelService {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  @Inject(ChannelRepository)
  private repo: ChannelRepository;

  @Inject(KindRegistry)
  private kinds: KindRegistry;

  view(row: ChannelRow): ChannelView {
    return {
      id: row.id,
      name: row.name,
      kind: row.kind,
      enabled: row.enabled,
      config: row.config,
      secrets_set: Object.keys(row.secrets).sort(),
      template: row.template as ChannelTemplate,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async create(body: ChannelCreate): Promise<string> {
    const kind = this.kinds.get(body.kind);
    const name = this.name(body.name);
    const { config, secrets } = this.split(kind, this.kinds.checkConfig(kind, body.config));
    try {
      return await this.repo.insert({ name, kind: kind.kind, enabled: body.enabled ?? true, config, secrets, template: this.template(body.template) });
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) throw nameTaken();
      throw err;
    }
  }

  async list(limit: number, cursor?: string): Promise<{ rows: ChannelView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, ([, id]) => isUuid(id)) as [string, string]) : null;
    const { rows, next } = page(await this.repo.list(limit, after), limit, (r) => [r.name.toLowerCase(), r.id]);
    return { rows: rows.map((r) => this.view(r)), next };
  }

  async get(id: string): Promise<ChannelView> {
    return this.view(await this.row(id));
  }

  /** Name, config and template; an omitted secret field keeps the stored secret, a null one clears it. */
  async patch(id: string, body: ChannelPatch): Promise<ChannelView> {
    const row = await this.row(id);
    const kind = this.kinds.get(row.kind);
    let { config, secrets } = row;
    if (body.config) {
      const merged: Record<string, unknown> = { ...body.config };
      for (const field of kind.secretFields) if (!(field in merged) && row.secrets[field]) merged[field] = this.ctx.secrets.unseal(row.secrets[field]);
      ({ config, secrets } = this.split(kind, this.kinds.checkConfig(kind, merged)));
    }
    const template = body.template === undefined ? row.template : this.template(body.template ?? undefined);
    try {
      await this.repo.update(id, { name: body.name === undefined ? row.name : this.name(body.name), config, secrets, template });
    } catch (err) {
      if (isPgError(err, PG_ERROR.uniqueViolation)) throw nameTaken();
      throw err;
    }
    return this.get(id);
  }

  async setEnabled(id: string, enabled: boolean): Promise<void> {
    if (!isUuid(id) || !(await this.repo.setEnabled(id, enabled))) throw noChannel();
  }

  async remove(id: string): Promise<void> {
    if (!isUuid(id) || !(await this.repo.remove(id))) throw noChannel();
  }

  /** The channel with its secrets unsealed, for a send (never answered). */
  async forSend(id: string): Promise<{ row: ChannelRow; kind: ChannelKind; channel: ChannelForSend } | null> {
    const row = await this.repo.get(id);
    if (!row) return null;
    const config: Record<string, unknown> = { ...row.config };
    for (const [field, sealed] of Object.entries(row.secrets)) config[field] = this.ctx.secrets.unseal(sealed);
    return { row, kind: this.kinds.get(row.kind), channel: { id: row.id, name: row.name, config } };
  }

  async row(id: string): Promise<ChannelRow> {
    const row = isUuid(id) ? await this.repo.get(id) : null;
    if (!row) throw noChannel();
    return row;
  }

  private name(name: string): string {
    const trimmed = name.trim();
    if (!trimmed) throw badRequest("validation_failed", "name must not be blank.");
    return trimmed;
  }

  /** Secret fields go sealed into their own column; null or absent ones hold nothing. */
  private split(kind: ChannelKind, checked: Record<string, unknown>): { config: Record<string, unknown>; secrets: Record<string, string> } {
    const config = { ...checked };
    const secrets: Record<string, string> = {};
    for (const field of kind.secretFields) {
      const value = config[field];
      delete config[field];
      if (typeof value === "string" && value !== "") secrets[field] = this.ctx.secrets.seal(value);
    }
    return { config, secrets };
  }

  /** Checks that every given template parses (400 invalid_template, naming the point and part). */
  private template(t: ChannelTemplate | undefined): ChannelRow["template"] {
    const out: ChannelRow["template"] = {};
    for (const point of LIFECYCLE_POINTS) {
      const item = t?.[point];
      if (!item) continue;
      for (const part of ["subject", "body"] as const) {
        const text = item[part];
        if (typeof text !== "string") continue;
        try {
          checkTemplate(text);
        } catch (err) {
          throw badRequest("invalid_template", `template.${point}.${part} does not parse: ${(err as Error).message.split("\n")[0]}`);
        }
      }
      out[point] = { subject: item.subject, body: item.body ?? null } satisfies TemplateItem;
    }
    return out;
  }
}

/** The sample alert a test send and the template preview render: a critical node alert. */
export function sampleAlert(nodeId = "00000000-0000-4000-8000-000000000000"): AlertTransition {
  return {
    id: "00000000-0000-4000-8000-0000000000a1",
    incident_key: `test:${nodeId}:cpu_load_pct`,
    recorded_at: new Date().toISOString(),
    at_unix_ms: Date.now(),
    check: "threshold",
    direction: "above",
    ifindex: null,
    if_name: null,
    metric: "cpu_load_pct",
    node: nodeId,
    observed_value: 97.5,
    threshold_value: 90,
    resolved: false,
    row: null,
    row_name: null,
    severity: "critical",
    state: "critical",
    subject_kind: "node",
    subject_name: "sample-node",
    title: "CPU load above 90% on sample-node",
    folder_path: [],
  };
}
