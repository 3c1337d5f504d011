import { Inject, Injectable } from "@tsed/di";
import { badRequest, isUuid, notFound, requireCaller, type Scope } from "../../../core/index.js";
import type { AckBroadcast, AckedIncident, AckRequest, AckResult } from "../models/AlertModels.js";
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
}

function toAcked(i: IncidentRecord, acked: AckedIncident["acked"]): AckedIncident {
  return { ...i, acked };
}
