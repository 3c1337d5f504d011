import { Inject, Injectable } from "@tsed/di";
import { ApiError, badRequest, callerScope, parseCidr } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { FLOWS_CONTEXT, type FlowsContext } from "../context.js";
import { parseFlowQuery } from "../lib/query.js";
import type { AsnImport, AsnImportResult, FlowConversation, FlowExporter, TopAs } from "../models/FlowModels.js";
import { FlowRepository } from "../repositories/FlowRepository.js";

/** When flow monitoring is not enabled (spec: "503-class when flow monitoring is not enabled (no flow store)"). */
const disabled = () => new ApiError(503, "flows_disabled", "Flow monitoring is not enabled (pluginConfig.flows.enabled).");

/** Reads of the flow store (folder scope: a scoped caller sees the flows its nodes exported) and the AS table import. */
@Injectable()
export class FlowQueryService {
  @Inject(FLOWS_CONTEXT)
  private ctx: FlowsContext;

  @Inject(FlowRepository)
  private repo: FlowRepository;

  private scope(): string[] | null {
    if (!this.ctx.config.enabled) throw disabled();
    const s = callerScope();
    return s === "All" ? null : s.folders;
  }

  conversations(q: Record<string, string | undefined>): Promise<FlowConversation[]> {
    const scope = this.scope();
    return this.repo.conversations(parseFlowQuery(q), scope);
  }

  topAs(q: Record<string, string | undefined>): Promise<TopAs[]> {
    const scope = this.scope();
    return this.repo.topAs(parseFlowQuery(q), scope);
  }

  exporters(): Promise<FlowExporter[]> {
    return this.repo.exporters(this.scope(), NODE_DIRECTORY_VIEW);
  }

  /** Loads prefixes (host bits cleared) and names; a prefix that does not parse refuses the whole request. */
  importAsn(body: AsnImport): Promise<AsnImportResult> {
    if (!this.ctx.config.enabled) throw disabled();
    const entries = body.entries.map((e, i) => {
      const prefix = parseCidr(e.prefix);
      if (!prefix) throw badRequest("validation_failed", `entries[${i}].prefix is not an IP prefix.`);
      return { prefix: `${prefix.text}`, asn: e.asn, name: e.name ?? null };
    });
    return this.repo.importAsn(entries, body.replace ?? true);
  }
}
