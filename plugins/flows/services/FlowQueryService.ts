import { Inject, Injectable } from "@tsed/di";
import { ApiError, badRequest, parseCidr, type Scope, scopeFolders } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { FLOWS_CONTEXT, type FlowsContext } from "../context.js";
import { AsnTableError, openAsnMmdb } from "../lib/mmdbAsn.js";
import { parseFlowQuery } from "../lib/query.js";
import type { AsnImport, AsnImportResult, AsnMmdbImportResult, FlowConversation, FlowExporter, TopAs } from "../models/FlowModels.js";
import { FlowRepository } from "../repositories/FlowRepository.js";

/** When flow monitoring is not enabled (spec: "503-class when flow monitoring is not enabled (no flow store)"). */
/** Rows per INSERT when an MMDB file is loaded (the walk pauses for the store between batches). */
const MMDB_BATCH = 5_000;

/** Groups an iterable in arrays of `size`. */
function* batchesOf<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

const disabled = () => new ApiError(503, "flows_disabled", "Flow monitoring is not enabled (pluginConfig.flows.enabled).");

/** Reads of the flow store (folder scope: a scoped caller sees the flows its nodes exported) and the AS table import. */
@Injectable()
export class FlowQueryService {
  @Inject(FLOWS_CONTEXT)
  private ctx: FlowsContext;

  @Inject(FlowRepository)
  private repo: FlowRepository;

  /** The scope's folders to filter by (null = all); 503 flows_disabled first when flows are off. */
  private folders(scope: Scope): string[] | null {
    if (!this.ctx.config.enabled) throw disabled();
    return scopeFolders(scope);
  }

  conversations(q: Record<string, string | undefined>, scope: Scope): Promise<FlowConversation[]> {
    const folders = this.folders(scope);
    return this.repo.conversations(parseFlowQuery(q), folders);
  }

  topAs(q: Record<string, string | undefined>, scope: Scope): Promise<TopAs[]> {
    const folders = this.folders(scope);
    return this.repo.topAs(parseFlowQuery(q), folders);
  }

  exporters(scope: Scope): Promise<FlowExporter[]> {
    return this.repo.exporters(this.folders(scope), NODE_DIRECTORY_VIEW);
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

  /** Throws 503 `flows_disabled` when the flow store is off. */
  ensureEnabled(): void {
    if (!this.ctx.config.enabled) throw disabled();
  }

  /** The largest MMDB upload, in bytes. */
  get asnUploadMaxBytes(): number {
    return this.ctx.config.asnUploadMaxMiB * 1024 * 1024;
  }

  /**
   * Loads the AS table from an MMDB file (GeoLite2-ASN, ipinfo, iptoasn-derived): every network with an AS number.
   * The file is walked while the rows are written, in one transaction: a fault found half-way (a damaged tree, a
   * record that is no map, an AS number that is none, no AS number at all) rolls it all back and answers 400
   * `invalid_asn_table`.
   */
  async importAsnMmdb(file: Buffer, replace: boolean): Promise<AsnMmdbImportResult> {
    if (!this.ctx.config.enabled) throw disabled();
    try {
      const table = openAsnMmdb(file);
      const { prefixes, names } = await this.repo.importAsnBatches(batchesOf(table.rows(), MMDB_BATCH), replace);
      const { networks, skipped } = table.stats;
      return { prefixes, names, networks, skipped, database_type: table.info.databaseType, ip_version: table.info.ipVersion };
    } catch (err) {
      if (err instanceof AsnTableError) throw badRequest("invalid_asn_table", `The file is not a usable AS table: ${err.message}.`);
      throw err;
    }
  }
}
