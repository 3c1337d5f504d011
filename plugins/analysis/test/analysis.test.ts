import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { analysisPlugin } from "../index.js";
import { jobFindings, runTool, seed, type Finding, type Fixture } from "./fixtures.js";

let k: TestKernel;
let fx: Fixture;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, analysisPlugin] });
  fx = await seed(k);
}, 120000);

afterAll(async () => {
  await k?.stop();
});

/** subject name → severity, sorted, for comparing what a run found. */
const found = (findings: Finding[]) => Object.fromEntries(findings.map((f) => [f.subject.name, f.severity]));

describe("tools on crafted data", () => {
  test("GET /analysis/tools lists the five tools with their params schemas and defaults", async () => {
    const res = await k.request("GET", "/analysis/tools");
    expect(res.status).toBe(200);
    const tools = res.body as { name: string; params_schema: { properties: Record<string, { default?: unknown }> } }[];
    expect(tools.map((t) => t.name)).toEqual(["capacity_forecast", "error_hotspots", "flapping", "silent_nodes", "subnet_utilisation"]);
    for (const t of tools)
      for (const [key, prop] of Object.entries(t.params_schema.properties)) expect([t.name, key, prop.default]).not.toEqual([t.name, key, undefined]);
  });

  test("capacity forecast: the rising interfaces, not the flat one nor the one past the horizon", async () => {
    const job = await runTool(k, { tool: "capacity_forecast" });
    expect(job.status).toBe("succeeded");
    const findings = await jobFindings(k, job.id);
    expect(found(findings)).toEqual({ "core-a1 Gi0/1": "critical", "core-a1 Gi0/4": "warning" });
    const gi1 = findings.find((f) => f.subject.name === "core-a1 Gi0/1")!;
    expect(gi1).toMatchObject({ tool: "capacity_forecast", node_id: fx.nodes.coreA1, ifindex: 1, folder_id: fx.folders.siteA });
    expect(gi1.subject).toEqual({ kind: "interface", id: `${fx.nodes.coreA1}:1`, name: "core-a1 Gi0/1" });
    expect(gi1.data.direction).toBe("in");
    expect(gi1.data.days_until_threshold).toBeGreaterThan(2.3);
    expect(gi1.data.days_until_threshold).toBeLessThan(3.2);
    const gi4 = findings.find((f) => f.subject.name === "core-a1 Gi0/4")!;
    expect(gi4.data.direction).toBe("out");
    expect(gi4.data.days_until_threshold).toBeGreaterThan(9);
    expect(gi4.data.days_until_threshold).toBeLessThan(12);
    expect(job.counts).toEqual({ total: 2, info: 0, warning: 1, critical: 1, truncated: false });
    // A longer horizon reaches Gi0/3 (~156 days) as info; Gi0/2 stays flat.
    const far = await jobFindings(k, (await runTool(k, { tool: "capacity_forecast", params: { horizonDays: 400 } })).id);
    expect(found(far)).toEqual({ "core-a1 Gi0/1": "critical", "core-a1 Gi0/3": "info", "core-a1 Gi0/4": "warning" });
  });

  test("error hot spots: above the error or discard threshold, critical at ten times; top limits the count", async () => {
    const findings = await jobFindings(k, (await runTool(k, { tool: "error_hotspots" })).id);
    expect(found(findings)).toEqual({ "core-a1 Gi0/1": "warning", "core-a1 Gi0/4": "critical" });
    expect(findings.find((f) => f.ifindex === 4)!.data).toMatchObject({ discards_per_sec: 200, errors_per_sec: 0 });
    // top keeps the worst.
    const top1 = await jobFindings(k, (await runTool(k, { tool: "error_hotspots", params: { top: 1 } })).id);
    expect(found(top1)).toEqual({ "core-a1 Gi0/4": "critical" });
    const strict = await jobFindings(k, (await runTool(k, { tool: "error_hotspots", params: { errorsPerSec: 10, discardsPerSec: 1000 } })).id);
    expect(strict).toEqual([]);
  });

  test("flapping: interfaces by oper transitions, nodes by reachability or alert rows, within the window only", async () => {
    const findings = await jobFindings(k, (await runTool(k, { tool: "flapping" })).id);
    expect(found(findings)).toEqual({ "edge-a2 Fa0/7": "warning", "core-b1": "critical", "core-a1": "warning" });
    expect(findings.find((f) => f.subject.name === "core-a1")!.data).toMatchObject({ alert_fires: 3, alert_clears: 3, reachability_transitions: 0 });
    expect(findings.find((f) => f.subject.name === "core-b1")!.data).toMatchObject({ reachability_transitions: 12 });
    // A 4-day window reaches Fa0/8's older burst (10 + 1 transitions: critical).
    const wide = await jobFindings(k, (await runTool(k, { tool: "flapping", params: { windowHours: 96 } })).id);
    expect(found(wide)["edge-a2 Fa0/8"]).toBe("critical");
    const noAlerts = await jobFindings(k, (await runTool(k, { tool: "flapping", params: { includeAlerts: false } })).id);
    expect(found(noAlerts)).toEqual({ "edge-a2 Fa0/7": "warning", "core-b1": "critical" });
  });

  test("silent nodes: neither a sample nor an event within the hours", async () => {
    const findings = await jobFindings(k, (await runTool(k, { tool: "silent_nodes" })).id);
    expect(found(findings)).toEqual({ a4: "warning", a5: "critical", "root-node": "critical" });
    const a4 = findings.find((f) => f.subject.name === "a4")!;
    expect(a4.data.silent_hours).toBeGreaterThan(49);
    expect(a4.data.silent_hours).toBeLessThan(51);
    expect(findings.find((f) => f.subject.name === "a5")!.data.last_seen).toBeNull();
    const long = await jobFindings(k, (await runTool(k, { tool: "silent_nodes", params: { hours: 60 } })).id);
    expect(found(long)).toEqual({ a5: "critical", "root-node": "critical" });
  });

  test("subnet utilisation: folder ranges against node addresses", async () => {
    const findings = await jobFindings(k, (await runTool(k, { tool: "subnet_utilisation" })).id);
    expect(found(findings)).toEqual({ "Site A 10.1.0.0/29": "warning" });
    expect(findings[0]).toMatchObject({ folder_id: fx.folders.siteA, node_id: null, subject: { kind: "subnet", id: "10.1.0.0/29" } });
    expect(findings[0].data).toMatchObject({ used: 5, size: 6, prefix: "10.1.0.0/29" });
    const all = await jobFindings(k, (await runTool(k, { tool: "subnet_utilisation", params: { includeAll: true, criticalPct: 80 } })).id);
    expect(found(all)).toEqual({ "Site A 10.1.0.0/29": "critical", "Site B 10.2.0.0/24": "info" });
    const node = await jobFindings(
      k,
      (await runTool(k, { tool: "subnet_utilisation", scope_kind: "node", scope_id: fx.nodes.coreB1, params: { includeAll: true } })).id,
    );
    expect(found(node)).toEqual({ "Site B 10.2.0.0/24": "info" });
  });

  test("scopes: a folder covers it and beneath, a node only itself", async () => {
    const siteA = await jobFindings(k, (await runTool(k, { tool: "silent_nodes", scope_kind: "folder", scope_id: fx.folders.siteA })).id);
    expect(found(siteA)).toEqual({ a4: "warning", a5: "critical" });
    const rack = await jobFindings(k, (await runTool(k, { tool: "flapping", scope_kind: "folder", scope_id: fx.folders.rackA1 })).id);
    expect(found(rack)).toEqual({ "edge-a2 Fa0/7": "warning" });
    const one = await jobFindings(k, (await runTool(k, { tool: "flapping", scope_kind: "node", scope_id: fx.nodes.coreB1 })).id);
    expect(found(one)).toEqual({ "core-b1": "critical" });
  });
});

describe("bad input", () => {
  const post = (body: unknown) => k.request("POST", "/analysis/jobs", { body });
  test("unknown tool, bad params, bad scope are 400 with stable codes; nothing is queued", async () => {
    const before = (await k.context("analysis").store.query<{ n: number }>("SELECT count(*)::int AS n FROM analysis.jobs")).rows[0].n;
    expectError(await post({ tool: "nope", scope_kind: "all" }), 400, "unknown_tool");
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", params: { hours: 0 } }), 400, "invalid_params");
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", params: { hours: "24" } }), 400, "invalid_params");
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", params: { bogus: 1 } }), 400, "invalid_params");
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", params: [1] }), 400, "validation_failed");
    expectError(await post({ tool: "silent_nodes", scope_kind: "everything" }), 400, "validation_failed");
    expectError(await post({ tool: "silent_nodes", scope_kind: "folder" }), 400, "validation_failed");
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", scope_id: fx.folders.siteA }), 400, "validation_failed");
    expectError(await post({ tool: "silent_nodes", scope_kind: "node", scope_id: "not-a-uuid" }), 400, "validation_failed");
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", extra: true }), 400, "validation_failed");
    expectError(await post({ tool: "silent_nodes", scope_kind: "node", scope_id: randomUUID() }), 404, "not_found");
    expectError(await post({ tool: "silent_nodes", scope_kind: "folder", scope_id: fx.nodes.a3 }), 404, "not_found");
    const big = { hours: 24, pad: "x".repeat(300 * 1024) };
    expectError(await post({ tool: "silent_nodes", scope_kind: "all", params: big }), 413, "document_too_large");
    const after = (await k.context("analysis").store.query<{ n: number }>("SELECT count(*)::int AS n FROM analysis.jobs")).rows[0].n;
    expect(after).toBe(before);
  });

  test("findings query: bad cursor, severity, tool are 400; unknown job is 404", async () => {
    expectError(await k.request("GET", "/analysis/findings?before=yesterday"), 400, "validation_failed");
    expectError(await k.request("GET", "/analysis/findings?before=2026-02-30T00:00:00Z"), 400, "validation_failed");
    expectError(await k.request("GET", `/analysis/findings?before_id=${randomUUID()}`), 400, "validation_failed");
    expectError(await k.request("GET", "/analysis/findings?before=2026-01-01T00:00:00Z&before_id=x"), 400, "validation_failed");
    expectError(await k.request("GET", "/analysis/findings?severity=huge"), 400, "validation_failed");
    expectError(await k.request("GET", "/analysis/findings?tool=nope"), 400, "validation_failed");
    expectError(await k.request("GET", "/analysis/findings?limit=0"), 400, "validation_failed");
    expectError(await k.request("GET", `/analysis/jobs/${randomUUID()}`), 404, "not_found");
    expectError(await k.request("GET", "/analysis/jobs/not-a-uuid"), 404, "not_found");
    expectError(await k.request("GET", `/analysis/jobs/${randomUUID()}/findings`), 404, "not_found");
  });
});

describe("GET /analysis/findings", () => {
  let all: Finding[];
  beforeAll(async () => {
    await k.context("analysis").store.query("DELETE FROM analysis.jobs");
    for (const tool of ["capacity_forecast", "error_hotspots", "flapping", "silent_nodes", "subnet_utilisation"]) await runTool(k, { tool });
    all = (await k.request("GET", "/analysis/findings?limit=1000")).body as Finding[];
  });

  test("newest first by (at, id); every finding of a run shares its at", async () => {
    expect(all.length).toBe(2 + 2 + 3 + 3 + 1);
    const keys = all.map((f) => [f.at, f.id].join(" "));
    expect([...keys].sort().reverse()).toEqual(keys);
    const byJob = new Map<string, Set<string>>();
    for (const f of all) byJob.set(f.job_id, (byJob.get(f.job_id) ?? new Set()).add(f.at));
    expect([...byJob.values()].every((ats) => ats.size === 1)).toBe(true);
    expect(all[0].at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  test("keyset walk with before + before_id over ties on at gives every row once; before alone is strictly before", async () => {
    const walked: Finding[] = [];
    let query = "limit=2";
    for (let i = 0; i < 20; i++) {
      const page = (await k.request("GET", `/analysis/findings?${query}`)).body as Finding[];
      if (!page.length) break;
      walked.push(...page);
      const last = page[page.length - 1];
      query = `limit=2&before=${encodeURIComponent(last.at)}&before_id=${last.id}`;
    }
    expect(walked.map((f) => f.id)).toEqual(all.map((f) => f.id));
    const first = all[0];
    const strictly = (await k.request("GET", `/analysis/findings?limit=1000&before=${encodeURIComponent(first.at)}`)).body as Finding[];
    expect(strictly.every((f) => f.at < first.at)).toBe(true);
    expect(strictly.length).toBe(all.filter((f) => f.at < first.at).length);
  });

  test("filters: tool, severity, node_id, group_id (folder and beneath)", async () => {
    const q = async (query: string) => ((await k.request("GET", `/analysis/findings?limit=1000&${query}`)).body as Finding[]).map((f) => f.id).sort();
    const ids = (pred: (f: Finding) => boolean) =>
      all
        .filter(pred)
        .map((f) => f.id)
        .sort();
    expect(await q("tool=flapping")).toEqual(ids((f) => f.tool === "flapping"));
    expect(await q("tool=flapping,silent_nodes")).toEqual(ids((f) => f.tool === "flapping" || f.tool === "silent_nodes"));
    expect(await q("severity=critical")).toEqual(ids((f) => f.severity === "critical"));
    expect(await q("severity=warning,info")).toEqual(ids((f) => f.severity !== "critical"));
    expect(await q(`node_id=${fx.nodes.coreA1}`)).toEqual(ids((f) => f.node_id === fx.nodes.coreA1));
    expect((await q(`node_id=${fx.nodes.coreA1}`)).length).toBe(2 + 2 + 1);
    const siteA = ids((f) => f.folder_id === fx.folders.siteA || f.folder_id === fx.folders.rackA1);
    expect(await q(`group_id=${fx.folders.siteA}`)).toEqual(siteA);
    expect(await q(`group_id=${fx.folders.rackA1}`)).toEqual(ids((f) => f.folder_id === fx.folders.rackA1));
    expect(await q(`group_id=${fx.folders.siteA}&severity=critical&tool=silent_nodes`)).toEqual(
      ids((f) => f.tool === "silent_nodes" && f.severity === "critical" && f.folder_id === fx.folders.siteA),
    );
    expect(await q(`group_id=${randomUUID()}`)).toEqual([]);
  });
});

describe("access", () => {
  test("permission matrix: no token, bad token, viewer, operator, admin, API token vs session", async () => {
    const job = await runTool(k, { tool: "silent_nodes" });
    const viewer = await k.session("viewer");
    const viewerToken = await k.token("viewer");
    const operator = await k.session("operator");
    const operatorToken = await k.token("operator");
    const admin = await k.session("admin");
    const reads = ["/analysis/tools", "/analysis/findings", `/analysis/jobs/${job.id}`, `/analysis/jobs/${job.id}/findings`, "/analysis/schedules"];
    for (const path of reads) {
      expectError(await k.request("GET", path, { token: null }), 401, "unauthorized");
      expectError(await k.request("GET", path, { token: "not-a-token" }), 401, "unauthorized");
      for (const token of [viewer, viewerToken, operator, operatorToken, admin, k.adminToken])
        expect([path, (await k.request("GET", path, { token })).status]).toEqual([path, 200]);
    }
    const body = { tool: "silent_nodes", scope_kind: "all" };
    expectError(await k.request("POST", "/analysis/jobs", { token: null, body }), 401, "unauthorized");
    expectError(await k.request("POST", "/analysis/jobs", { token: "not-a-token", body }), 401, "unauthorized");
    expectError(await k.request("POST", "/analysis/jobs", { token: viewer, body }), 403, "permission_denied");
    expectError(await k.request("POST", "/analysis/jobs", { token: viewerToken, body }), 403, "permission_denied");
    for (const token of [operator, operatorToken, admin, k.adminToken]) expect((await runTool(k, body, token)).status).toBe("succeeded");
  });

  test("a folder-scoped caller runs only in its folders and sees only their findings and jobs", async () => {
    const scoped = await k.token("operator", { folders: [fx.folders.siteB] });
    const scopedA = await k.session("viewer", { folders: [fx.folders.rackA1] });
    expectError(
      await k.request("POST", "/analysis/jobs", { token: scoped, body: { tool: "flapping", scope_kind: "folder", scope_id: fx.folders.siteA } }),
      404,
      "not_found",
    );
    expectError(
      await k.request("POST", "/analysis/jobs", { token: scoped, body: { tool: "flapping", scope_kind: "node", scope_id: fx.nodes.coreA1 } }),
      404,
      "not_found",
    );
    // Scope all covers its folders only.
    const mine = await runTool(k, { tool: "flapping" }, scoped);
    expect(found(await jobFindings(k, mine.id, scoped))).toEqual({ "core-b1": "critical" });
    const subnet = await runTool(k, { tool: "subnet_utilisation", params: { includeAll: true } }, scoped);
    expect(found(await jobFindings(k, subnet.id, scoped))).toEqual({ "Site B 10.2.0.0/24": "info" });
    // Another scope does not see that job; the unrestricted admin's job is not visible to it either.
    expectError(await k.request("GET", `/analysis/jobs/${mine.id}`, { token: scopedA }), 404, "not_found");
    const adminJob = await runTool(k, { tool: "flapping" });
    expectError(await k.request("GET", `/analysis/jobs/${adminJob.id}`, { token: scoped }), 404, "not_found");
    expect((await k.request("GET", `/analysis/jobs/${mine.id}`)).status).toBe(200);
    // Findings across runs: only those filed beneath the caller's folders.
    const seen = (await k.request("GET", "/analysis/findings?limit=1000", { token: scopedA })).body as Finding[];
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((f) => f.folder_id === fx.folders.rackA1)).toBe(true);
    const seenB = (await k.request("GET", "/analysis/findings?limit=1000", { token: scoped })).body as Finding[];
    expect(seenB.every((f) => f.folder_id === fx.folders.siteB)).toBe(true);
    expect(seenB.some((f) => f.node_id === fx.nodes.root)).toBe(false);
    expectError(await k.request("GET", `/analysis/findings?group_id=${fx.folders.siteA}`, { token: scoped }), 404, "not_found");
    expectError(await k.request("GET", `/analysis/findings?node_id=${fx.nodes.coreA1}`, { token: scoped }), 404, "not_found");
    expect((await k.request("GET", `/analysis/findings?node_id=${fx.nodes.coreB1}`, { token: scoped })).status).toBe(200);
  });
});
