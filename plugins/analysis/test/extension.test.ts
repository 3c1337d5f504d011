import { definePlugin } from "../../../core/index.js";
import { responseProblems } from "../../../test/support/openapi.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import type { AnalysisTool, FindingDraft } from "../contract.js";
import { analysisPlugin } from "../index.js";
import { AnalysisRepository } from "../repositories/AnalysisRepository.js";
import { jobFindings, runTool, seed } from "./fixtures.js";

const CANARY = "internal-detail-canary-5b7e1f";

/** A third tool from another plugin: one finding per node in scope, severities cycling. */
const perNode: AnalysisTool = {
  name: "per_node",
  title: "One finding per node",
  description: "test tool",
  paramsSchema: { type: "object", additionalProperties: false, properties: { label: { type: "string", maxLength: 20, default: "n" } } },
  async run(run) {
    const severities = ["info", "warning", "critical"] as const;
    return run.nodes.map((n, i): FindingDraft => ({
      severity: severities[i % 3],
      subject: { kind: "node", id: n.id, name: n.name },
      node_id: n.id,
      ifindex: null,
      folder_id: n.group_id,
      folder_path: n.folder_path,
      message: `${run.params.label} ${n.name}`,
      data: {},
    }));
  },
};

const failing: AnalysisTool = {
  name: "failing",
  title: "Fails",
  description: "test tool",
  paramsSchema: { type: "object", additionalProperties: false, properties: {} },
  async run() {
    throw new Error(`connection refused at ${CANARY}`);
  },
};

const toolsPlugin = definePlugin({
  id: "extra-tools",
  version: "0.1.0",
  kernel: "^0.1.0",
  dependsOn: { analysis: "^0.1.0" },
  contributes: { "analysis.tools": [perNode, failing] },
});

let k: TestKernel;

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, analysisPlugin, toolsPlugin],
    overrides: { pluginConfig: { analysis: { maxFindingsPerRun: 4 } } } as never,
  });
  await seed(k);
}, 120000);

afterAll(async () => {
  await k?.stop();
});

test("a contributed tool is listed and runs; past maxFindingsPerRun the most severe are kept and the run says so", async () => {
  const names = ((await k.request("GET", "/analysis/tools")).body as { name: string }[]).map((t) => t.name);
  expect(names).toEqual(["capacity_forecast", "error_hotspots", "flapping", "silent_nodes", "subnet_utilisation", "per_node", "failing"]);
  const job = await runTool(k, { tool: "per_node", params: { label: "seen" } });
  expect(job).toMatchObject({ status: "succeeded", counts: { total: 4, critical: 2, warning: 2, info: 0, truncated: true } });
  const findings = await jobFindings(k, job.id);
  expect(findings.length).toBe(4);
  expect(findings.every((f) => f.message.startsWith("seen "))).toBe(true);
});

test("a run that throws is failed with a generic sentence; the detail goes to the log only", async () => {
  const job = (await runTool(k, { tool: "failing" })) as unknown as { status: string; error: string; counts: object };
  expect(job.status).toBe("failed");
  expect(job.error).toBe("The analysis run failed; the service log has the detail.");
  expect(JSON.stringify(job)).not.toContain(CANARY);
  expect(k.logs.some((l) => l.includes("analysis run failed"))).toBe(true);
});

test("the prune job's query drops findings and finished jobs past the retention", async () => {
  const job = await runTool(k, { tool: "per_node" });
  const store = k.context("analysis").store;
  await store.query(`UPDATE analysis.jobs SET created_at = now() - interval '100 days' WHERE id = $1`, [job.id]);
  await store.query(`UPDATE analysis.findings SET at = now() - interval '100 days' WHERE job_id = $1`, [job.id]);
  expect(await k.context("analysis").get(AnalysisRepository).prune(90)).toBe(1);
  expect((await store.query(`SELECT count(*)::int AS n FROM analysis.findings WHERE job_id = $1`, [job.id])).rows[0].n).toBe(0);
  expect((await k.request("GET", `/analysis/jobs/${job.id}`)).status).toBe(404);
});

test("a run left running past its lock (the service stopped under it) is marked failed", async () => {
  const job = await runTool(k, { tool: "per_node" });
  const store = k.context("analysis").store;
  await store.query(`UPDATE analysis.jobs SET status = 'running', started_at = now() - interval '40 minutes' WHERE id = $1`, [job.id]);
  const fresh = await runTool(k, { tool: "per_node" });
  await store.query(`UPDATE analysis.jobs SET status = 'running', started_at = now() - interval '1 minute' WHERE id = $1`, [fresh.id]);
  expect(await k.context("analysis").get(AnalysisRepository).failStale(35)).toBe(1);
  expect((await k.request("GET", `/analysis/jobs/${job.id}`)).body).toMatchObject({ status: "failed", error: expect.stringContaining("interrupted") });
  expect((await k.request("GET", `/analysis/jobs/${fresh.id}`)).body).toMatchObject({ status: "running" });
});

test("OpenAPI: every analysis route with its success answer, 401, 500 and error envelopes", async () => {
  const doc = (await k.request("GET", "/openapi.json")).body as {
    paths: Record<string, Record<string, never>>;
    components: { schemas: Record<string, unknown> };
  };
  const paths = Object.fromEntries(Object.entries(doc.paths).filter(([p]) => p.startsWith("/api/v1/analysis/")));
  expect(Object.keys(paths).sort()).toEqual([
    "/api/v1/analysis/findings",
    "/api/v1/analysis/jobs",
    "/api/v1/analysis/jobs/{id}",
    "/api/v1/analysis/jobs/{id}/findings",
    "/api/v1/analysis/schedules",
    "/api/v1/analysis/schedules/{id}",
    "/api/v1/analysis/tools",
  ]);
  expect(responseProblems({ ...doc, paths })).toEqual([]);
  const params = (paths["/api/v1/analysis/findings"] as Record<string, { parameters: { name: string }[] }>).get.parameters.map((p) => p.name).sort();
  expect(params).toEqual(["before", "before_id", "group_id", "limit", "node_id", "severity", "tool"]);
});
