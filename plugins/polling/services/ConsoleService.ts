import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isIpAddress, isUuid, notFound, page, type Scope, scopeFolders } from "../../../core/index.js";
// Contract tokens inventory's manifest exports.
import { Classifier, Credentials } from "../../inventory/contract.js";
import { snmpGet, SYSTEM_OIDS } from "../checks/SnmpGet.js";
import {
  type AgentHealthView,
  type InterfaceSearchHit,
  PROBE_DEFAULT_TIMEOUT_MS,
  type ProbeOutcome,
  type SnmpProbeBody,
  type SnmpProbeResult,
} from "../models/ConsoleModels.js";
import { ConsoleRepository } from "../repositories/ConsoleRepository.js";
import { snmpCredentialOf } from "./AssignmentService.js";

const SNMP_DEFAULT_PORT = 161;

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
const likeContains = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * What the operator console asks of polling besides metrics: a one-off SNMP probe before a device is added, each
 * node's agent health as its latest polls saw it, and interfaces found by name across nodes.
 */
@Injectable()
export class ConsoleService {
  @Inject(ConsoleRepository)
  private repo: ConsoleRepository;

  @Inject(Credentials)
  private credentials: Credentials;

  @Inject(Classifier)
  private classifier: Classifier;

  /**
   * One GET of sysObjectID, sysDescr and sysName with a stored credential, bounded by `timeout_ms` and no retry. The
   * answer carries what the agent said and never the credential's secret.
   */
  async probe(body: SnmpProbeBody): Promise<SnmpProbeResult> {
    const address = body.address.trim();
    if (!isIpAddress(address)) throw badRequest("validation_failed", "address must be an IPv4 or IPv6 address.");
    const revealed = await this.credentials.reveal(body.credential_id.toLowerCase());
    if (!revealed) throw badRequest("unknown_reference", "credential_id names no credential.");
    const cred = snmpCredentialOf(revealed);
    if (!cred) throw badRequest("invalid_credential", "credential_id is not an SNMP credential (snmp_v2c or snmp_v3).");
    const started = performance.now();
    const got = await snmpGet(address, cred, [SYSTEM_OIDS.sysObjectID, SYSTEM_OIDS.sysDescr, SYSTEM_OIDS.sysName], {
      port: body.port ?? SNMP_DEFAULT_PORT,
      timeoutMs: body.timeout_ms ?? PROBE_DEFAULT_TIMEOUT_MS,
      retries: 0,
    });
    const none = { sys_name: null, sys_descr: null, sys_object_id: null, profile_id: null, profile_name: null, vendor: null, model: null };
    if (!got.ok) {
      const outcome: ProbeOutcome = got.reason === "timeout" ? "timeout" : got.reason === "auth" ? "auth" : "error";
      return { answered: false, outcome, ...none, elapsed_ms: Math.round(performance.now() - started) };
    }
    const [oid, descr, name] = got.values.map((v) => v?.text ?? null);
    const sysObjectId = oid ? oid.replace(/^\./, "") : null;
    const c = await this.classifier.classify(sysObjectId, descr);
    return {
      answered: true,
      outcome: "ok",
      sys_name: name,
      sys_descr: descr,
      sys_object_id: sysObjectId,
      profile_id: c?.profile_id ?? null,
      profile_name: c ? await this.repo.profileName(c.profile_id) : null,
      vendor: c?.vendor ?? null,
      model: c?.model ?? null,
      elapsed_ms: Math.round(performance.now() - started),
    };
  }

  async agentHealthList(scope: Scope, problems: boolean, limit: number, cursor: string | undefined): Promise<{ rows: AgentHealthView[]; next: string | null }> {
    const afterId = cursor === undefined ? null : decodeCursor(cursor, 1, ([id]) => isUuid(id))[0];
    const rows = await this.repo.agentHealth({ folders: scopeFolders(scope), nodeId: null, afterId, problems, limit: limit + 1 });
    return page(rows, limit, (r) => [r.node_id]);
  }

  /** 404 for a node that is missing or outside the caller's scope (the same answer for both). */
  async agentHealth(nodeId: string, scope: Scope): Promise<AgentHealthView> {
    const [row] = await this.repo.agentHealth({ folders: scopeFolders(scope), nodeId: nodeId.toLowerCase(), afterId: null, problems: false, limit: 1 });
    if (!row) throw notFound("No such node.");
    return row;
  }

  async searchInterfaces(
    q: string,
    groupId: string | undefined,
    limit: number,
    cursor: string | undefined,
    scope: Scope,
  ): Promise<{ rows: InterfaceSearchHit[]; next: string | null }> {
    const needle = q.trim();
    if (!needle) throw badRequest("validation_failed", "q must hold a non-blank character.");
    const folders = scopeFolders(scope);
    if (groupId !== undefined && !(await this.repo.folderVisible(groupId.toLowerCase(), folders))) throw notFound("No such folder.");
    let after: { name: string; nodeId: string; ifindex: number } | null = null;
    if (cursor !== undefined) {
      const [name, nodeId, ifindex] = decodeCursor(cursor, 3, ([, id, ix]) => isUuid(id) && /^\d{1,10}$/.test(ix));
      after = { name, nodeId, ifindex: Number(ifindex) };
    }
    const rows = await this.repo.searchInterfaces({ pattern: likeContains(needle), folders, groupId: groupId?.toLowerCase() ?? null, after, limit: limit + 1 });
    const { rows: kept, next } = page(rows, limit, (r) => [r.sort_name, r.node_id, String(r.ifindex)]);
    return { rows: kept.map(({ sort_name: _, ...hit }) => hit), next };
  }
}
