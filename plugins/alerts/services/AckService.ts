import { Inject, Injectable } from "@tsed/di";
import { badRequest, isUuid, notFound, requireCaller, type Scope, scopeFolders } from "../../../core/index.js";
import type { AckBroadcast, AckedIncident, AckRequest, AckResult, BulkAckItem, BulkAckRequest, BulkAckResult } from "../models/AlertModels.js";
import { ActiveAlertRepository, type IncidentRecord, type SubjectRef } from "../repositories/ActiveAlertRepository.js";
import { ActiveAlertService } from "./ActiveAlertService.js";
import { ALERTS_CONTEXT, type AlertsContext } from "../context.js";

const SUBJECT = /^(node|pool|netcloud_org):(.+)$/s;

/**
 * The subject of an ack request: `node`, or a readable `subject` ("pool:<name>", "netcloud_org:<name>",
 * "node:<uuid>"); null when neither is given or the subject cannot be read.
 */
export function readSubject(body: Pick<AckRequest, "node" | "subject">): SubjectRef | null {
  if (body.node !== undefined) return body.subject === undefined ? { kind: "node", nodeId: body.node.toLowerCase() } : null;
  if (body.subject === undefined) return null;
  const m = SUBJECT.exec(body.subject.trim());
  if (!m) return null;
  const name = m[2].trim();
  if (!name) return null;
  if (m[1] === "node") return isUuid(name) ? { kind: "node", nodeId: name.toLowerCase() } : null;
  return { kind: m[1] as "pool" | "netcloud_org", name };
}

/** Acknowledgement of incidents: recorded or cleared per incident (key + current severity), and broadcast on alerts.acks. */
@Injectable()
export class AckService {
  @Inject(ALERTS_CONTEXT)
  private ctx: AlertsContext;

  @Inject(ActiveAlertRepository)
  private repo: ActiveAlertRepository;

  @Inject(ActiveAlertService)
  private active: ActiveAlertService;

  async ack(body: AckRequest, scope: Scope): Promise<AckResult> {
    const subject = readSubject(body);
    if (!subject) {
      throw badRequest("validation_failed", 'Name exactly one subject: node (a uuid) or subject ("pool:<name>", "netcloud_org:<name>" or "node:<uuid>").');
    }
    const caller = requireCaller();
    let folders: string[] = [];
    if (subject.kind === "node") {
      folders = await this.active.assertNodeVisible(subject.nodeId, scope);
    } else if (scope !== "All" || !(await this.repo.namedSubjectKnown(subject.kind, subject.name))) {
      // Named subjects have no folder: a folder-scoped caller cannot reach them.
      throw notFound("No such subject.");
    }
    const narrow = { check: body.check?.toLowerCase() ?? null, metric: body.metric ?? null, ifindex: body.ifindex ?? null, row: body.row ?? null };
    const clear = body.clear === true;
    const note = body.note === undefined || body.note.trim() === "" ? null : body.note;

    const { incidents, changed } = await this.ctx.store.tx(async (db) => {
      const selected = await this.repo.lockIncidents(subject, narrow, db);
      if (!selected.length) return { incidents: [] as AckedIncident[], changed: 0 };
      if (clear) {
        const had = await this.repo.deleteAcks(selected, db);
        return { incidents: selected.map((i) => toAcked(i, null)), changed: had.size };
      }
      const acks = await this.repo.upsertAcks(selected, caller.username, note, db);
      return { incidents: selected.map((i) => toAcked(i, acks.get(i.incident_key) ?? null)), changed: acks.size };
    });

    const result: AckResult = { acked: clear ? 0 : changed, cleared: clear ? changed : 0, incidents };
    if (changed > 0) {
      const payload: AckBroadcast = {
        action: clear ? "cleared" : "recorded",
        subject_kind: subject.kind,
        node: subject.kind === "node" ? subject.nodeId : null,
        subject_name: subject.kind === "node" ? null : subject.name,
        by: caller.username,
        at: incidents.find((i) => i.acked)?.acked?.at ?? new Date().toISOString(),
        ...result,
      };
      // Delivered to sockets whose scope covers the node's folder; named subjects (no folder) reach scope All only.
      this.ctx.realtime.publish("acks", "ack", payload, { folders });
    }
    return result;
  }

  bulk(body: BulkAckRequest, scope: Scope): Promise<BulkAckResult> {
    return bulkAck({ ctx: this.ctx, repo: this.repo }, body, scope);
  }
}

/**
 * Bulk acknowledgement by active alert id (POST /alerts/ack/bulk): one transaction, one answer per distinct id, and one
 * alerts.ack broadcast per subject (so each reaches the sockets whose scope covers that subject's folder).
 */
export async function bulkAck(deps: { ctx: AlertsContext; repo: ActiveAlertRepository }, body: BulkAckRequest, scope: Scope): Promise<BulkAckResult> {
  const caller = requireCaller();
  const ids = [...new Set(body.ids.map((id) => id.toLowerCase()))];
  const clear = body.clear === true;
  const note = body.note === undefined || body.note.trim() === "" ? null : body.note;
  const { selected, acks, had } = await deps.ctx.store.tx(async (db) => {
    const selected = await deps.repo.lockIncidentsByIds(ids, scopeFolders(scope), db);
    if (!selected.length) return { selected, acks: new Map<string, AckedIncident["acked"]>(), had: new Set<string>() };
    if (clear) return { selected, acks: new Map<string, AckedIncident["acked"]>(), had: await deps.repo.deleteAcks(selected, db) };
    return { selected, acks: await deps.repo.upsertAcks(selected, caller.username, note, db), had: new Set<string>() };
  });
  const byId = new Map(selected.map((i) => [i.id, i]));
  const items: BulkAckItem[] = ids.map((id) => {
    const i = byId.get(id);
    if (!i) return { id, status: "not_found", incident: null };
    const { folder_path: _p, ...record } = i;
    if (clear) return { id, status: had.has(i.incident_key) ? "cleared" : "unchanged", incident: toAcked(record, null) };
    return { id, status: "acked", incident: toAcked(record, acks.get(i.incident_key) ?? null) };
  });
  const count = (status: string) => items.filter((i) => i.status === status).length;

  // One broadcast per subject, shaped like the single ack's, with only the incidents that changed.
  const groups = new Map<string, { folders: string[]; incidents: AckedIncident[]; first: (typeof selected)[number] }>();
  for (const item of items) {
    if (item.status !== "acked" && item.status !== "cleared") continue;
    const i = byId.get(item.id)!;
    const key = i.node ?? `${i.subject_kind}:${i.subject_name}`;
    const g = groups.get(key) ?? { folders: i.folder_path, incidents: [], first: i };
    g.incidents.push(item.incident!);
    groups.set(key, g);
  }
  const at = items.find((i) => i.incident?.acked)?.incident?.acked?.at ?? new Date().toISOString();
  for (const g of groups.values()) {
    const payload: AckBroadcast = {
      action: clear ? "cleared" : "recorded",
      subject_kind: g.first.subject_kind,
      node: g.first.node,
      subject_name: g.first.node ? null : g.first.subject_name,
      by: caller.username,
      at,
      acked: clear ? 0 : g.incidents.length,
      cleared: clear ? g.incidents.length : 0,
      incidents: g.incidents,
    };
    deps.ctx.realtime.publish("acks", "ack", payload, { folders: g.folders });
  }
  return { acked: count("acked"), cleared: count("cleared"), not_found: count("not_found"), items };
}

function toAcked(i: IncidentRecord, acked: AckedIncident["acked"]): AckedIncident {
  return { ...i, acked };
}
