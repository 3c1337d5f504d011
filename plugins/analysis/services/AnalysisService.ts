import { Inject, Injectable } from "@tsed/di";
import { assertInScope, badRequest, isUuid, requireCaller, type Scope, scopeFolders, timestampParam, tokenList } from "../../../core/index.js";
import { ANALYSIS_CONTEXT, type AnalysisContext } from "../context.js";
import { SEVERITIES, type FindingDraft, type Severity } from "../lib/tools/types.js";
import type { FindingQuery, FindingView, JobCreate, JobFindingQuery, JobView } from "../models/AnalysisModels.js";
import { AnalysisRepository, type JobRow } from "../repositories/AnalysisRepository.js";
import { ScopeTargets } from "./ScopeTargets.js";
import { ToolRegistry } from "./ToolRegistry.js";

const RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

/** On-demand runs, the run itself (an Agenda job), and the saved findings, through the caller's folder scope. */
@Injectable()
export class AnalysisService {
  @Inject(ANALYSIS_CONTEXT)
  private ctx: AnalysisContext;

  @Inject(AnalysisRepository)
  private repo: AnalysisRepository;

  @Inject(ToolRegistry)
  private tools: ToolRegistry;

  @Inject(ScopeTargets)
  private targets: ScopeTargets;

  /** Queues a run (analysis.run job) and answers its id. */
  async submit(body: JobCreate, scope: Scope): Promise<string> {
    const { tool, params } = this.tools.check(body.tool, body.params);
    const caller = requireCaller();
    const target = await this.targets.resolve(body.scope_kind, body.scope_id, scope);
    const id = await this.repo.insertJob({
      tool: tool.name,
      scope_kind: target.scope_kind,
      scope_id: target.scope_id,
      params,
      run_folders: target.run_folders,
      visible_folders: target.visible_folders,
      schedule_id: null,
      requested_by: caller.username,
    });
    await this.ctx.jobs.now("run", { jobId: id });
    return id;
  }

  async job(id: string, scope: Scope): Promise<JobView> {
    const job = await this.visibleJob(id, scope);
    const { run_folders: _r, visible_folders: _v, ...view } = job;
    return view;
  }

  async jobFindings(id: string, query: JobFindingQuery, scope: Scope): Promise<FindingView[]> {
    await this.visibleJob(id, scope);
    return this.findings(query, scope, id);
  }

  async findings(query: FindingQuery, scope: Scope, jobId: string | null = null): Promise<FindingView[]> {
    if (query.before_id !== undefined && query.before === undefined) throw badRequest("validation_failed", "before_id needs before.");
    const before = timestampParam("before", query.before);
    const nodeId = query.node_id?.toLowerCase() ?? null;
    const groupId = query.group_id?.toLowerCase() ?? null;
    // Outside the caller's scope reads as missing (404), as everywhere; with scope All an id that names nothing matches nothing.
    if (scope !== "All" && nodeId !== null) await this.targets.resolve("node", nodeId, scope);
    if (scope !== "All" && groupId !== null) await this.targets.resolve("folder", groupId, scope);
    return this.repo.findings(
      {
        limit: query.limit,
        before: before === null ? null : { at: before, id: query.before_id?.toLowerCase() ?? null },
        jobId,
        tools: tokenList("tool", query.tool, this.tools.names()),
        severities: tokenList("severity", query.severity, SEVERITIES),
        nodeId,
        groupId,
        scope: scopeFolders(scope),
      },
      // One job's findings are read right after it finished: the primary has them; the cross-job list may lag a little.
      jobId === null ? this.ctx.store.read : undefined,
    );
  }

  private async visibleJob(id: string, scope: Scope): Promise<JobRow> {
    const job = isUuid(id) ? await this.repo.job(id.toLowerCase()) : null;
    assertInScope(scope, job?.visible_folders, "No analysis job with that id.");
    return job!;
  }

  /** The analysis.run job: runs the tool over its scope and saves what it finds. */
  async execute(jobId: string): Promise<void> {
    const job = await this.repo.claim(jobId);
    if (!job) return;
    try {
      const { tool, params } = this.tools.check(job.tool, job.params);
      const nodes = await this.repo.scopeNodes(job.scope_kind, job.scope_id, job.run_folders);
      await this.repo.progress(job.id, 0.1);
      const drafts = await tool.run({
        query: async (sql, args = []) => (await this.ctx.store.query(sql, args)).rows as never,
        nodes,
        scope: { kind: job.scope_kind as "all" | "folder" | "node", id: job.scope_id, folders: job.run_folders },
        params,
        now: new Date(),
        progress: (fraction) => this.repo.progress(job.id, Math.max(0.1, Math.min(0.95, fraction))),
      });
      const max = this.ctx.config.maxFindingsPerRun;
      const kept: FindingDraft[] = drafts.length > max ? [...drafts].sort((a, b) => RANK[a.severity] - RANK[b.severity]).slice(0, max) : drafts;
      const counts = { total: kept.length, info: 0, warning: 0, critical: 0, truncated: drafts.length > max };
      for (const f of kept) counts[f.severity]++;
      await this.repo.finish(job, kept, counts);
      this.ctx.log.info("analysis run finished", { job: job.id, tool: job.tool, findings: counts.total });
    } catch (err) {
      this.ctx.log.error("analysis run failed", { job: job.id, tool: job.tool, error: err instanceof Error ? err.message : String(err) });
      await this.repo.fail(job.id, "The analysis run failed; the service log has the detail.");
    }
  }
}
