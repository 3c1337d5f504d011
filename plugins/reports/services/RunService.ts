/**
 * Report runs: queued by a request or a schedule, rendered by the `render` job (each section in a read-only
 * transaction with a statement timeout, for the run's folder scope), stored with their HTML, CSV and PDF, then
 * delivered to the run's channels (email, PDF attached). Progress goes out on the `reports.runs` channel.
 */
import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page, requireCaller, type Scope, scopeFolders } from "../../../core/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { ReportDelivery } from "../../notifications/contract.js";
import type { SectionContext } from "../contract.js";
import { REPORTS_CONTEXT, type ReportsContext } from "../context.js";
import { renderCsv } from "../lib/csv.js";
import type { RenderedSection, ReportDocument } from "../lib/document.js";
import { renderHtml } from "../lib/html.js";
import { renderPdf } from "../lib/pdf.js";
import type { RunDetailView, RunRequest, RunView } from "../models/ReportModels.js";
import { ReportRepository, type RunRow } from "../repositories/ReportRepository.js";
import { DefinitionService } from "./DefinitionService.js";
import { SectionRegistry } from "./SectionRegistry.js";

export const FORMATS = { html: "text/html; charset=utf-8", csv: "text/csv; charset=utf-8", pdf: "application/pdf" } as const;
export type Format = keyof typeof FORMATS;

const noRun = () => notFound("No such report run.");

function scopeOf(folders: string[] | null): Scope {
  return folders === null ? "All" : { folders };
}

export function runView(r: RunRow): RunView {
  const { scope_folders, spec: _spec, channel_ids: _c, data: _d, ...rest } = r;
  return { ...rest, scope: scope_folders === null ? "All" : { folders: scope_folders } };
}

@Injectable()
export class RunService {
  @Inject(REPORTS_CONTEXT)
  private ctx: ReportsContext;

  @Inject(ReportRepository)
  private repo: ReportRepository;

  @Inject(DefinitionService)
  private definitions: DefinitionService;

  @Inject(SectionRegistry)
  private sections: SectionRegistry;

  @Inject(ReportDelivery)
  private delivery: ReportDelivery;

  /** Queues a run of a definition for the caller's scope; the render job takes it. */
  async request(definitionId: string, body: RunRequest | undefined, scope: Scope): Promise<string> {
    const def = await this.definitions.get(definitionId);
    const checked = this.sections.check(def.spec);
    const channels = body?.channel_ids ?? [];
    if (!channels.every(isUuid)) throw badRequest("validation_failed", "channel_ids must be channel ids (uuid).");
    const days = body?.range_days ?? checked.range_days ?? this.ctx.config.defaultRangeDays;
    const to = new Date();
    const caller = requireCaller();
    const id = await this.repo.insertRun(this.ctx.store, {
      definition_id: def.id,
      definition_name: def.name,
      schedule_id: null,
      requested_by: caller.username,
      scope_folders: scopeFolders(scope),
      from: new Date(to.getTime() - days * 86400000),
      to,
      spec: def.spec,
      channel_ids: channels,
    });
    await this.ctx.jobs.now("render", { run_id: id });
    return id;
  }

  /** A run the caller may see: a scoped caller only those made for folders all within its own (else 404). */
  private visible(r: RunRow | null, scope: Scope): RunRow {
    if (!r) throw noRun();
    if (scope === "All") return r;
    if (r.scope_folders === null || !r.scope_folders.every((f) => scope.folders.includes(f))) throw noRun();
    return r;
  }

  async list(limit: number, cursor: string | undefined, definitionId: string | undefined, scope: Scope): Promise<{ rows: RunView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, (p) => isUuid(p[1]) && !Number.isNaN(Date.parse(p[0]))) as [string, string]) : null;
    const rows = await this.repo.runs(limit, after, scopeFolders(scope), definitionId ?? null);
    const p = page(rows, limit, (r) => [r.created_at, r.id]);
    return { rows: p.rows.map(runView), next: p.next };
  }

  async get(id: string, scope: Scope): Promise<RunDetailView> {
    const r = this.visible(await this.repo.run(id, true), scope);
    return { ...runView(r), sections: (r.data as unknown[] | null) ?? null };
  }

  async output(id: string, format: Format, scope: Scope): Promise<Buffer> {
    const r = this.visible(await this.repo.run(id), scope);
    const content = r.status === "succeeded" ? await this.repo.output(r.id, format) : null;
    if (!content) throw notFound("This run has no output yet (it is queued, running or failed).", "run_not_ready");
    return content;
  }

  private progress(r: RunRow, payload: Record<string, unknown>): void {
    this.ctx.realtime.publish(
      "runs",
      "progress",
      { run_id: r.id, definition_id: r.definition_id, ...payload },
      r.scope_folders ? { folders: r.scope_folders } : {},
    );
  }

  /** Renders a queued run (the render job); a run another replica took, or one already done, is left alone. */
  async execute(id: string): Promise<void> {
    if (!(await this.repo.startRun(id))) return;
    const r = (await this.repo.run(id)) as RunRow;
    const scope = scopeOf(r.scope_folders);
    const range = { from: new Date(r.range_from), to: new Date(r.range_to) };
    const sections: RenderedSection[] = [];
    try {
      const checked = this.sections.check(r.spec);
      this.progress(r, { status: "running", done: 0, total: checked.sections.length });
      for (const [i, s] of checked.sections.entries()) {
        const started = performance.now();
        const kind = this.sections.get(s.kind);
        let out: RenderedSection;
        try {
          const data = await this.renderSection((ctx) => kind!.render(ctx, s.params, scope, range), r.scope_folders);
          out = { kind: s.kind, title: s.title, ms: Math.round(performance.now() - started), data };
        } catch (err) {
          const timeout = (err as { code?: string }).code === "57014";
          this.ctx.log.error("report section failed", { run_id: id, kind: s.kind, error: (err as Error).message });
          out = {
            kind: s.kind,
            title: s.title,
            ms: Math.round(performance.now() - started),
            error: timeout ? "This section took longer than the section time limit." : "This section could not be rendered (see the service log).",
          };
        }
        sections.push(out);
        this.progress(r, { status: "running", done: i + 1, total: checked.sections.length, section: s.kind, ms: out.ms });
      }
      const doc: ReportDocument = {
        name: r.definition_name,
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        scope: await this.scopeLabel(r.scope_folders),
        generated_at: new Date().toISOString(),
        sections,
      };
      const outputs = [
        { format: "html", content: Buffer.from(renderHtml(doc), "utf8") },
        { format: "csv", content: Buffer.from(renderCsv(doc), "utf8") },
        { format: "pdf", content: await renderPdf(doc) },
      ];
      await this.repo.finishRun(id, { status: "succeeded", error: null, data: sections, outputs });
      this.progress(r, { status: "succeeded", done: sections.length, total: sections.length });
      if (r.channel_ids.length) await this.deliver(r, doc, outputs.find((o) => o.format === "pdf")!.content);
    } catch (err) {
      this.ctx.log.error("report run failed", { run_id: id, error: (err as Error).message });
      await this.repo.finishRun(id, { status: "failed", error: "The report could not be rendered (see the service log).", data: sections, outputs: [] });
      this.progress(r, { status: "failed" });
    }
  }

  /** One section in its own read-only transaction with the section time limit. */
  private async renderSection<T>(render: (ctx: SectionContext) => Promise<T>, scopeFolders: string[] | null): Promise<T> {
    return this.ctx.store.tx(async (db) => {
      await db.query("SET TRANSACTION READ ONLY");
      await db.query(`SET LOCAL statement_timeout = ${Math.floor(this.ctx.config.sectionTimeoutMs)}`);
      const ctx: SectionContext = {
        scopeFolders,
        query: async <R>(sql: string, params?: unknown[]) => (await db.query(sql, params)).rows as R[],
      };
      return render(ctx);
    });
  }

  private async scopeLabel(folders: string[] | null): Promise<string> {
    if (folders === null) return "All folders";
    const { rows } = await this.ctx.store.query<{ name: string }>(
      `SELECT DISTINCT d.folder_names[array_position(d.folder_path, f)] AS name
         FROM unnest($1::uuid[]) f JOIN ${NODE_DIRECTORY_VIEW} d ON f = ANY (d.folder_path) ORDER BY 1`,
      [folders],
    );
    return `Folders: ${rows.map((r) => r.name).join(", ") || folders.join(", ")}`;
  }

  private async deliver(r: RunRow, doc: ReportDocument, pdf: Buffer): Promise<void> {
    const results: { channel_id: string; delivered: boolean; error: string | null }[] = [];
    const day = doc.to.slice(0, 10);
    for (const channel of r.channel_ids) {
      try {
        await this.delivery.send(channel, {
          subject: `Report: ${doc.name} (${day})`,
          text: `${doc.name}\nFrom ${doc.from} to ${doc.to}\n${doc.scope}\n\nThe report is attached as a PDF.\n`,
          attachments: [{ filename: `report-${day}.pdf`, contentType: "application/pdf", content: pdf }],
        });
        results.push({ channel_id: channel, delivered: true, error: null });
      } catch (err) {
        results.push({ channel_id: channel, delivered: false, error: (err as Error).message });
      }
    }
    await this.repo.setDeliveries(r.id, results);
  }

  /** Deletes runs past their retention, and marks failed the runs left running for over 2 hours (render's lock lifetime is 1 hour). */
  async prune(): Promise<number> {
    await this.repo.failStaleRuns(2);
    return this.repo.pruneRuns(this.ctx.config.runRetentionDays);
  }
}
