/**
 * The reports plugin against a real kernel with inventory, polling, alerts, notifications, events and flows: data
 * goes in through their real paths (poller samples API, the alert engine's contract, the events ingest API, IPFIX
 * over UDP), a report is rendered and read back as PDF (pdftotext), CSV (csv-parse) and HTML; plus validation,
 * the document cap, schedules firing in their zone, delivery by email, the bundle tables, permissions and scope.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { parse } from "csv-parse/sync";
import { definePlugin } from "../../../core/index.js";
import { expectError } from "../../../test/support/assertions.js";
import { responseProblems } from "../../../test/support/openapi.js";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { dataSet, ip4, ipfixMessage, sendDatagrams, templateSet, u, IPV4_FLOW_FIELDS } from "../../../test/support/flowPeers.js";
import { startSmtpServer, type SmtpTestServer } from "../../../test/support/smtpServer.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { alertsPlugin, EventAlertService } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { flowsPlugin } from "../../flows/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { notificationsPlugin } from "../../notifications/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { REPORT_SECTIONS_POINT, reportsPlugin, type ReportSectionKind } from "../index.js";
import { localParts } from "../lib/schedule.js";
import { REPORT_BUNDLE_TABLES } from "../services/bundle.js";

type Row = Record<string, unknown>;

/** A third-party section kind (the example of plugins/reports/README.md): nodes whose name matches a prefix. */
const nodeNames: ReportSectionKind = {
  kind: "node_names",
  title: "Node names",
  paramsSchema: { type: "object", additionalProperties: false, required: ["prefix"], properties: { prefix: { type: "string", maxLength: 40 } } },
  async render(ctx, params) {
    const rows = await ctx.query<{ name: string }>(
      `SELECT name FROM ${NODE_DIRECTORY_VIEW} WHERE starts_with(name, $1) AND ($2::uuid[] IS NULL OR folder_path && $2::uuid[]) ORDER BY name`,
      [params.prefix, ctx.scopeFolders],
    );
    return { tables: [{ title: "Matching nodes", columns: ["Name"], rows: rows.map((r) => [r.name]) }] };
  },
};
const extraSectionsPlugin = definePlugin({
  id: "report-extras",
  version: "0.1.0",
  kernel: "^0.1.0",
  dependsOn: { reports: "^0.1.0", inventory: "^0.1.0" },
  contributes: { [REPORT_SECTIONS_POINT]: [nodeNames] },
});
let k: TestKernel;
let folderA: string;
let folderB: string;
let nodeA: string;
let nodeB: string;
const HOUR = 3600000;

const post = (path: string, body: unknown, token = k.adminToken) => k.request("POST", path, { body, token });
const get = (path: string, token = k.adminToken) => k.request("GET", path, { token });
const idOf = (res: { status: number; body: unknown }) => {
  expect(res.status).toBe(201);
  return (res.body as Row).id as string;
};

const FULL_SPEC = {
  range_days: 1,
  sections: [
    { kind: "availability", group_by: "node" },
    { kind: "availability", group_by: "folder", title: "Availability by folder" },
    { kind: "top_interfaces", measure: "throughput", limit: 5 },
    { kind: "top_interfaces", measure: "errors", limit: 5 },
    { kind: "alert_summary" },
    { kind: "event_summary" },
    { kind: "flow_top" },
    { kind: "inventory" },
  ],
};

async function waitRun(id: string, token = k.adminToken): Promise<Row> {
  return until(`run ${id} finished`, async () => {
    const r = await get(`/reports/runs/${id}`, token);
    const status = (r.body as Row).status;
    return status === "succeeded" || status === "failed" ? (r.body as Row) : null;
  });
}

async function download(id: string, format: string, token = k.adminToken) {
  return k.http
    .get(`/api/v1/reports/runs/${id}/${format}`)
    .set("Authorization", `Bearer ${token}`)
    .buffer(true)
    .parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => cb(null, Buffer.concat(chunks)));
    });
}

function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), "nms-report-"));
  writeFileSync(join(dir, "r.pdf"), pdf);
  return execFileSync("pdftotext", ["-layout", join(dir, "r.pdf"), "-"], { encoding: "utf8" });
}

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin, eventsPlugin, flowsPlugin, reportsPlugin, extraSectionsPlugin],
    overrides: {
      pluginConfig: {
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200 },
        alerts: { flushMs: 50 },
      },
    },
  });
  folderA = idOf(await post("/node-groups", { name: "Zürich site" }));
  folderB = idOf(await post("/node-groups", { name: "site-b" }));
  nodeA = idOf(await post("/nodes", { name: "router-a", address: "127.0.0.1", group_id: folderA, vendor: "Cisco" }));
  nodeB = idOf(await post("/nodes", { name: "switch-b", address: "127.0.0.2", group_id: folderB, vendor: "Juniper" }));

  // Polled samples through the remote-poller API (the real ingest path of the polling plugin).
  expect((await post("/pollers/register", { poller_id: "rep-1", pool: "default" })).status).toBe(200);
  const now = Date.now();
  const samples: Row[] = [];
  const s = (node: string, metric: string, value: number, at: number, ifindex: number | null = null, if_name: string | null = null) =>
    samples.push({ node_id: node, metric, value, at_unix_ms: at, ifindex, if_name, row: null, row_name: null });
  for (let i = 1; i <= 10; i++) {
    const at = now - i * 60000 * 5;
    s(nodeA, "reachable", i <= 9 ? 1 : 0, at); // 90 %
    s(nodeB, "reachable", 1, at); // 100 %
    s(nodeA, "if_in_bps", 8e8, at, 1, "Gi0/1");
    s(nodeA, "if_out_bps", 2e8, at, 1, "Gi0/1");
    s(nodeB, "if_in_bps", 1e6, at, 7, "xe-0/0/7");
    s(nodeB, "if_out_bps", 1e6, at, 7, "xe-0/0/7");
    s(nodeB, "if_in_errors_ps", 3, at, 7, "xe-0/0/7");
  }
  const counters = { in_octets: "1", out_octets: "1", in_errors: "0", out_errors: "0", in_discards: "0", out_discards: "0" };
  const iface = (node_id: string, ifindex: number, if_name: string) => ({
    node_id,
    ifindex,
    if_name,
    if_alias: null,
    if_speed_bps: 1e9,
    oper_up: true,
    counter_bits: 64,
    counters,
    uptime_ticks: 1000,
    at_unix_ms: now - 60000,
  });
  const interfaces = [iface(nodeA, 1, "Gi0/1"), iface(nodeB, 7, "xe-0/0/7")];
  const posted = await post("/pollers/rep-1/samples", { samples, interfaces, backfill: true });
  expect(posted.status).toBe(200);

  // Alerts through the alert engine's contract (what event rules use): fire, ack over the API, clear.
  const alerts = k.context("alerts").get(EventAlertService);
  const check = randomUUID();
  expect(await alerts.fire({ node_id: nodeA, check_id: check, severity: "critical", title: "Link down", at_ms: now - 30 * 60000 })).toBe(true);
  await alerts.flush();
  expect((await post("/alerts/ack", { node: nodeA })).status).toBeLessThan(300);
  expect(await alerts.clear(nodeA, check)).toBe(true);
  await alerts.flush();

  // Events through the ingest API of an http source filed under node A.
  const src = await post("/event-sources", { kind: "http", name: "app-logs", node_id: nodeA });
  expect(src.status).toBe(201);
  const token = (src.body as Row).token as string;
  const ingest = await k.http
    .post("/api/v1/events/ingest")
    .set("Authorization", `Bearer ${token}`)
    .send({ events: [{ message: "disk almost full" }, { message: "user login" }, { message: "user logout" }] });
  expect(ingest.status).toBe(202);
  await until("events stored", async () => {
    const n = await k.context("reports").store.query<{ n: number }>("SELECT count(*)::int AS n FROM events.report_events");
    return n.rows[0].n >= 3;
  });

  // Flows: IPFIX from 127.0.0.1 (node A's address) to the collector.
  const listeners = (await get("/listeners")).body as { listeners: { name: string; port: number }[] };
  const port = listeners.listeners.find((l) => l.name === "flows.udp")!.port;
  const FIELDS = IPV4_FLOW_FIELDS;
  const nowS = Math.floor(now / 1000);
  const rec = (src: string, bytes: number) =>
    Buffer.concat([ip4(src), ip4("198.51.100.20"), u(1, 6), u(2, 50000), u(2, 443), u(8, bytes), u(8, 10), u(4, nowS - 120)]);
  await sendDatagrams(port, [
    ipfixMessage({ domain: 1, exportSecs: nowS, seq: 1 }, [
      templateSet(10, [{ id: 300, fields: FIELDS }]),
      dataSet(300, [rec("192.0.2.10", 900000), rec("192.0.2.11", 5000)]),
    ]),
  ]);
  await until("flows stored", async () => {
    const n = await k.context("reports").store.query<{ n: number }>("SELECT coalesce(sum(bytes), 0)::float8 AS n FROM flows.report_flows_1m");
    return n.rows[0].n >= 905000;
  });
}, 120000);

afterAll(async () => {
  closeAllSockets();
  await k?.stop();
});

describe("a report from real data", () => {
  let runId: string;
  let definition: string;

  it("renders every built-in section into HTML, CSV and PDF", async () => {
    definition = idOf(await post("/reports/definitions", { name: "Weekly network report", description: "all sections", spec: FULL_SPEC }));
    const socket = await connectSocket(k.url, await k.token("viewer"));
    expect(await socket.subscribe("reports.runs")).toEqual({ ok: true, channel: "reports.runs" });
    const accepted = await post(`/reports/definitions/${definition}/run`, {});
    expect(accepted.status).toBe(202);
    runId = (accepted.body as Row).id as string;
    const run = await waitRun(runId);
    // Progress went out live: one event per section, then the end.
    await socket.waitFor("reports.progress", (p) => (p as Row).run_id === runId && (p as Row).status === "succeeded", 10000);
    const progress = socket.received("reports.progress", (p) => (p as Row).run_id === runId) as Row[];
    expect(progress.filter((p) => p.status === "running" && p.section).map((p) => p.done)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    socket.close();
    expect(run).toMatchObject({ status: "succeeded", scope: "All", definition_id: definition, error: null });
    expect((run.outputs as Row[]).map((o) => o.format).sort()).toEqual(["csv", "html", "pdf"]);
    const sections = run.sections as { kind: string; error?: string }[];
    expect(sections.map((s) => s.kind)).toEqual(FULL_SPEC.sections.map((s) => s.kind));
    expect(sections.filter((s) => s.error)).toEqual([]);
  });

  it("the CSV parses back with the figures the data gives", async () => {
    const res = await download(runId, "csv");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    const records = parse(res.body as Buffer, { relax_column_count: true, skip_empty_lines: true }) as string[][];
    const block = (title: string) => {
      const at = records.findIndex((r) => r[0] === "#section" && r[3] === title);
      expect(at).toBeGreaterThan(-1);
      const out: string[][] = [];
      for (let i = at + 2; i < records.length && records[i][0] !== "#section"; i++) out.push(records[i]);
      return { header: records[at + 1], rows: out };
    };
    const avail = block("Availability per node");
    expect(avail.header).toEqual(["Node", "Folder", "Checks", "Answered", "Availability %"]);
    expect(avail.rows).toEqual([
      ["router-a", "Zürich site", "10", "9", "90"],
      ["switch-b", "site-b", "10", "10", "100"],
    ]);
    const busiest = block("Busiest interfaces (bit/s)");
    expect(busiest.rows[0]).toEqual(["router-a", "Gi0/1", "800000000", "200000000", "800000000", "200000000"]);
    expect(block("Interfaces with the most errors and discards (mean per second)").rows[0].slice(0, 3)).toEqual(["switch-b", "xe-0/0/7", "3"]);
    expect(block("Alerts by severity").rows).toEqual([
      ["critical", "1", "1"],
      ["warning", "0", "0"],
      ["info", "0", "0"],
    ]);
    expect(block("Nodes with the most alerts").rows[0].slice(0, 3)).toEqual(["router-a", "Zürich site", "1"]);
    const times = block("Response times").rows;
    expect(times.map((r) => [r[0], r[1]])).toEqual([
      ["Mean time to acknowledge", "1"],
      ["Mean time to resolve", "1"],
    ]);
    expect(Number(times[0][3])).toBeGreaterThan(1700);
    expect(block("Events by kind").rows).toEqual([["syslog", "3"]]);
    expect(block("Events by source").rows).toEqual([["app-logs", "syslog", "3"]]);
    expect(block("Events by rule outcome").rows.reduce((n, r) => n + Number(r[1]), 0)).toBe(3);
    expect(block("Top talkers").rows.map((r) => [r[0], r[1]])).toEqual([
      ["192.0.2.10", "900000"],
      ["192.0.2.11", "5000"],
    ]);
    expect(block("Nodes by vendor").rows).toEqual([
      ["Cisco", "1"],
      ["Juniper", "1"],
    ]);
  });

  it("the PDF carries the text (DejaVu: non-Latin too) and the HTML inline SVG charts", async () => {
    const pdf = await download(runId, "pdf");
    expect(pdf.status).toBe(200);
    expect(pdf.headers["content-type"]).toBe("application/pdf");
    const body = pdf.body as Buffer;
    expect(body.subarray(0, 5).toString()).toBe("%PDF-");
    const text = pdfText(body);
    for (const s of [
      "Weekly network report",
      "Availability per node",
      "router-a",
      "Zürich site",
      "Busiest interfaces",
      "Gi0/1",
      "Alerts by severity",
      "Top talkers",
      "192.0.2.10",
      "Nodes by vendor",
    ])
      expect(text).toContain(s);
    // The charts are vector rectangles (re operators) in the page content, not images.
    expect(body.includes(Buffer.from("/Subtype /Image"))).toBe(false);
    const html = await download(runId, "html");
    expect(html.headers["content-type"]).toMatch(/^text\/html/);
    const page = (html.body as Buffer).toString("utf8");
    expect(page).toContain("<svg");
    expect(page).toContain("Zürich site");
    expect(page).not.toContain("<script");
  });

  it("lists runs newest first with a keyset cursor", async () => {
    const second = (await post(`/reports/definitions/${definition}/run`, {})).body as Row;
    await waitRun(second.id as string);
    const first = await get("/reports/runs?limit=1");
    expect(first.status).toBe(200);
    expect((first.body as Row[]).map((r) => r.id)).toEqual([second.id]);
    const next = await get(`/reports/runs?limit=1&cursor=${first.headers.get("x-next-cursor")}`);
    expect((next.body as Row[]).map((r) => r.id)).toEqual([runId]);
    expectError(await get("/reports/runs?cursor=bogus"), 400, "invalid_cursor");
  });

  it("a folder-scoped caller's report covers only its folders, and it sees only such runs", async () => {
    const scoped = await k.token("operator", { folders: [folderB] });
    const socketB = await connectSocket(k.url, await k.token("viewer", { folders: [folderB] }));
    const socketA = await connectSocket(k.url, await k.token("viewer", { folders: [folderA] }));
    expect(await socketB.subscribe("reports.runs")).toMatchObject({ ok: true });
    expect(await socketA.subscribe("reports.runs")).toMatchObject({ ok: true });
    const accepted = await post(`/reports/definitions/${definition}/run`, {}, scoped);
    expect(accepted.status).toBe(202);
    const id = (accepted.body as Row).id as string;
    const run = await waitRun(id, scoped);
    // Progress of a run made for folder B reaches sockets scoped to B, not those scoped to A.
    await socketB.waitFor("reports.progress", (p) => (p as Row).run_id === id && (p as Row).status === "succeeded", 10000);
    await socketA.expectNone("reports.progress", (p) => (p as Row).run_id === id, 500);
    socketA.close();
    socketB.close();
    expect(run.scope).toEqual({ folders: [folderB] });
    const csv = (await download(id, "csv", scoped)).body.toString("utf8");
    expect(csv).toContain("switch-b");
    expect(csv).not.toContain("router-a");
    expect(csv).not.toContain("192.0.2.10");
    expect(csv).not.toContain("app-logs");
    // The unrestricted runs are not its to see.
    expectError(await get(`/reports/runs/${runId}`, scoped), 404, "not_found");
    expectError(await k.request("GET", `/reports/runs/${runId}/pdf`, { token: scoped }), 404, "not_found");
    expect(((await get("/reports/runs", scoped)).body as Row[]).map((r) => r.id)).toEqual([id]);
  });
});

describe("section kinds", () => {
  it("lists the built-in kinds and a contributed one, which renders like any other", async () => {
    const kinds = ((await get("/reports/section-kinds")).body as Row[]).map((x) => x.kind);
    expect(kinds).toEqual(["availability", "top_interfaces", "alert_summary", "event_summary", "flow_top", "inventory", "node_names"]);
    expectError(await post("/reports/definitions", { name: "x", spec: { sections: [{ kind: "node_names" }] } }), 400, "invalid_section_params");
    const def = idOf(await post("/reports/definitions", { name: "names", spec: { sections: [{ kind: "node_names", prefix: "switch" }] } }));
    const id = ((await post(`/reports/definitions/${def}/run`, {})).body as Row).id as string;
    expect(await waitRun(id)).toMatchObject({ status: "succeeded" });
    const csv = parse((await download(id, "csv")).body as Buffer, { relax_column_count: true, skip_empty_lines: true }) as string[][];
    expect(csv.slice(1)).toEqual([["#section", "node_names", "Node names", "Matching nodes"], ["Name"], ["switch-b"]]);
  });
});

describe("definitions: validation and the document cap", () => {
  it("answers the spec's 400s with stable codes, and 404", async () => {
    expectError(await post("/reports/definitions", { name: "  ", spec: { sections: [] } }), 400, "validation_failed");
    expectError(await post("/reports/definitions", { name: "x", spec: [1] }), 400, "validation_failed");
    expectError(await post("/reports/definitions", { name: "x", spec: "text" }), 400, "validation_failed");
    expectError(await post("/reports/definitions", { name: "x", spec: { sections: "no" } }), 400, "invalid_spec");
    expectError(await post("/reports/definitions", { name: "x", spec: { sections: [{ kind: "weather" }] } }), 400, "unknown_section_kind");
    expectError(await post("/reports/definitions", { name: "x", spec: { sections: [{ kind: "availability", limit: 0 }] } }), 400, "invalid_section_params");
    expectError(
      await post("/reports/definitions", { name: "x", spec: { sections: [{ kind: "availability", colour: "red" }] } }),
      400,
      "invalid_section_params",
    );
    expectError(await post("/reports/definitions", { name: "x", spec: { sections: [] }, extra: 1 }), 400, "validation_failed");
    const id = idOf(await post("/reports/definitions", { name: "d", spec: { sections: [{ kind: "inventory" }] } }));
    const put = (body: unknown, target = id) => k.request("PUT", `/reports/definitions/${target}`, { body });
    expect(await put({ name: "renamed", description: null, spec: { sections: [{ kind: "alert_summary", limit: 3 }] } })).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    expect((await get(`/reports/definitions/${id}`)).body).toMatchObject({ name: "renamed", spec: { sections: [{ kind: "alert_summary", limit: 3 }] } });
    expectError(await put({ name: "", spec: { sections: [] } }), 400, "validation_failed");
    expectError(await put({ name: "x", spec: null }), 400, "validation_failed");
    expectError(await put({ name: "x", spec: { sections: [{ kind: "nope" }] } }), 400, "unknown_section_kind");
    expectError(await put({ name: "x", spec: { sections: [] } }, randomUUID()), 404, "not_found");
    expectError(await get("/reports/definitions/not-a-uuid"), 400, "validation_failed");
    // The run request's optional body.
    expectError(await post(`/reports/definitions/${id}/run`, { range_days: 0 }), 400, "validation_failed");
    expectError(await post(`/reports/definitions/${id}/run`, { colour: "red" }), 400, "validation_failed");
    expectError(await post(`/reports/definitions/${id}/run`, { channel_ids: ["nope"] }), 400, "validation_failed");
    expectError(await post(`/reports/definitions/${randomUUID()}/run`, {}), 404, "not_found");
    const bare = await k.request("POST", `/reports/definitions/${id}/run`);
    expect(bare.status).toBe(202);
    const ranged = await waitRun(((await post(`/reports/definitions/${id}/run`, { range_days: 3 })).body as Row).id as string);
    expect(Date.parse(ranged.range_to as string) - Date.parse(ranged.range_from as string)).toBe(3 * 86400000);
    await waitRun((bare.body as Row).id as string);
    // Nothing half-written: the failed PUTs left it as it was.
    expect((await get(`/reports/definitions/${id}`)).body).toMatchObject({ name: "renamed" });
    expect((await k.request("DELETE", `/reports/definitions/${id}`)).status).toBe(204);
    expectError(await get(`/reports/definitions/${id}`), 404, "not_found");
  });

  it("refuses a spec above limits.jsonDocumentMaxBytes with 413 document_too_large", async () => {
    const id = idOf(await post("/reports/definitions", { name: "cap", spec: { sections: [] } }));
    // The cap is checked before the spec's contents (whatever a plugin's section params may hold): one byte over answers 413.
    const filler = 262144 - Buffer.byteLength(JSON.stringify({ sections: [{ kind: "inventory" }], range_days: 1, notes: "" }));
    const atCap = { sections: [{ kind: "inventory" }], range_days: 1, notes: "n".repeat(filler) };
    expect(Buffer.byteLength(JSON.stringify(atCap))).toBe(262144);
    // At the cap it is the spec's contents that answer (notes is not a spec key), one byte over the cap answers 413.
    expectError(await post("/reports/definitions", { name: "cap0", spec: atCap }), 400, "invalid_spec");
    const huge = { ...atCap, notes: `${atCap.notes}n` };
    expectError(await k.request("PUT", `/reports/definitions/${id}`, { body: { name: "cap", spec: huge } }), 413, "document_too_large");
    expectError(await post("/reports/definitions", { name: "cap2", spec: huge }), 413, "document_too_large");
    expect((await get(`/reports/definitions/${id}`)).body).toMatchObject({ spec: { sections: [] } });
  });
});

describe("schedules", () => {
  it("checks the timing and the zone", async () => {
    const def = idOf(await post("/reports/definitions", { name: "sched-check", spec: { sections: [{ kind: "inventory" }] } }));
    const base = { definition_id: def, frequency: "daily", at_hour: 6, at_minute: 0 };
    expectError(await post("/reports/schedules", { ...base, timezone: "Mars/Olympus" }), 400, "invalid_timezone");
    expectError(await post("/reports/schedules", { ...base, frequency: "weekly" }), 400, "invalid_schedule");
    expectError(await post("/reports/schedules", { ...base, frequency: "monthly" }), 400, "invalid_schedule");
    expectError(await post("/reports/schedules", { ...base, at_hour: 24 }), 400, "validation_failed");
    expectError(await post("/reports/schedules", { ...base, frequency: "hourly" }), 400, "validation_failed");
    expectError(await post("/reports/schedules", { ...base, definition_id: randomUUID() }), 400, "unknown_reference");
    const id = idOf(await post("/reports/schedules", { ...base, frequency: "weekly", day_of_week: 1, timezone: "Asia/Kolkata" }));
    const view = (await get(`/reports/schedules/${id}`)).body as Row;
    // 06:00 in Kolkata (UTC+05:30) is 00:30 UTC, on a Monday there.
    expect(view.next_run_at).toMatch(/T00:30:00\.000000Z$/);
    expect(new Date(Date.parse(view.next_run_at as string) + 5.5 * HOUR).getUTCDay()).toBe(1);
  });

  it("fires in its zone (a zone where local time differs from UTC) as an Agenda job, and delivers the PDF by email", async () => {
    const smtp: SmtpTestServer = await startSmtpServer({ mode: "plain" });
    try {
      const channel = await post("/notification-channels", {
        name: "reports-mail",
        kind: "email",
        config: { host: "127.0.0.1", port: smtp.port, security: "none", from: "nms@example.com", to: ["noc@example.com"] },
      });
      expect(channel.status).toBe(201);
      const def = idOf(await post("/reports/definitions", { name: "Daily inventory", spec: { sections: [{ kind: "inventory" }] } }));
      // The next whole minute, as the clock reads in Kathmandu (UTC+05:45).
      const at = localParts(Date.now() + 60000, "Asia/Kathmandu");
      const sched = idOf(
        await post("/reports/schedules", {
          definition_id: def,
          frequency: "daily",
          at_hour: at.h,
          at_minute: at.mi,
          timezone: "Asia/Kathmandu",
          channel_ids: [(channel.body as Row).id],
        }),
      );
      const view = (await get(`/reports/schedules/${sched}`)).body as Row;
      const due = Date.parse(view.next_run_at as string);
      expect(due - Date.now()).toBeLessThanOrEqual(60000);
      // That instant reads at.h:at.mi in Kathmandu, and not in UTC (UTC+05:45 never shares a wall minute with UTC).
      expect(localParts(due, "Asia/Kathmandu")).toMatchObject({ h: at.h, mi: at.mi });
      expect(new Date(due).getUTCMinutes()).not.toBe(at.mi);
      const run = await until(
        "the scheduled run",
        async () => ((await get(`/reports/runs?definition_id=${def}`)).body as Row[]).find((r) => r.schedule_id === sched && r.status === "succeeded"),
        120000,
      );
      expect(Date.parse(run.range_to as string)).toBe(due);
      expect(Date.parse(run.created_at as string)).toBeGreaterThanOrEqual(due);
      const after = (await get(`/reports/schedules/${sched}`)).body as Row;
      expect(Date.parse(after.next_run_at as string) - due).toBe(24 * HOUR);
      const mail = await until("the mail", async () => smtp.messages.find((m) => m.subject?.startsWith("Report: Daily inventory")), 30000);
      expect(mail.raw).toContain("application/pdf");
      const detail = await until("delivery recorded", async () => {
        const r = (await get(`/reports/runs/${run.id}`)).body as Row;
        return (r.deliveries as Row[]).length ? r : null;
      });
      expect(detail.deliveries).toEqual([{ channel_id: (channel.body as Row).id, delivered: true, error: null }]);
    } finally {
      await smtp.close();
    }
  }, 150000);
});

describe("bundle tables", () => {
  it("exports the record fields, imports with the spec's notes", async () => {
    const ctx = k.context("reports");
    const [defs, scheds] = REPORT_BUNDLE_TABLES;
    idOf(await post("/reports/definitions", { name: "exported", spec: { sections: [{ kind: "inventory" }] } }));
    const exported = (await defs.export(ctx)) as Row[];
    expect(exported.length).toBeGreaterThan(0);
    for (const r of exported) expect(Object.keys(r).sort()).toEqual(["description", "id", "name", "spec"]);
    for (const r of (await scheds.export(ctx)) as Row[])
      expect(Object.keys(r).sort()).toEqual(["at_hour", "at_minute", "day_of_month", "day_of_week", "definition_id", "enabled", "frequency", "id"]);
    const goodDef = randomUUID();
    const notes: Row[] = [];
    await ctx.store
      .tx(async (client) => {
        const imp = {
          client,
          mode: "merge" as const,
          dryRun: true,
          note: (code: string, count = 1, field: string | null = null) => notes.push({ code, count, field }),
        };
        const d = await defs.import!(
          ctx,
          [
            { id: goodDef, name: "imported", description: null, spec: { sections: [{ kind: "inventory" }] } },
            { id: randomUUID(), name: "bad kind", description: null, spec: { sections: [{ kind: "weather" }] } },
          ],
          imp as never,
        );
        expect(d).toEqual({ created: 1, updated: 0, skipped: 1, deleted: 0 });
        const s = await scheds.import!(
          ctx,
          [
            { id: randomUUID(), definition_id: goodDef, frequency: "weekly", at_hour: 7, at_minute: 30, day_of_week: 2, day_of_month: null, enabled: true },
            {
              id: randomUUID(),
              definition_id: randomUUID(),
              frequency: "daily",
              at_hour: 7,
              at_minute: 30,
              day_of_week: null,
              day_of_month: null,
              enabled: true,
            },
            { id: randomUUID(), definition_id: goodDef, frequency: "weekly", at_hour: 7, at_minute: 30, day_of_week: null, day_of_month: null, enabled: true },
          ],
          imp as never,
        );
        expect(s).toEqual({ created: 1, updated: 0, skipped: 2, deleted: 0 });
        const { rows } = await client.query<{ next_run_at: Date }>(`SELECT next_run_at FROM reports.schedules WHERE definition_id = $1`, [goodDef]);
        expect(rows[0].next_run_at.getTime()).toBeGreaterThan(Date.now());
        throw new Error("rollback");
      })
      .catch((e: Error) => expect(e.message).toBe("rollback"));
    expect(notes).toEqual([
      { code: "skipped_invalid_value", count: 1, field: "spec" },
      { code: "skipped_missing_reference", count: 1, field: "definition_id" },
      { code: "skipped_invalid_value", count: 1, field: null },
      { code: "schedule_next_run_recomputed", count: 1, field: "next_run_at" },
    ]);
  });
});

describe("the kernel's bundle routes", () => {
  it("GET /config/bundle carries the report tables; an import notes what it skipped and recomputed", async () => {
    const def = idOf(await post("/reports/definitions", { name: "bundled", description: "round trip", spec: { sections: [{ kind: "inventory" }] } }));
    const sched = idOf(
      await post("/reports/schedules", { definition_id: def, frequency: "monthly", day_of_month: 31, at_hour: 5, at_minute: 15, timezone: "Europe/Berlin" }),
    );
    const res = await get("/config/bundle");
    expect(res.status).toBe(200);
    const bundle = res.body as Row & { report_definitions: Row[]; report_schedules: Row[] };
    expect(bundle.report_definitions.find((d) => d.id === def)).toEqual({
      id: def,
      name: "bundled",
      description: "round trip",
      spec: { sections: [{ kind: "inventory" }] },
    });
    expect(bundle.report_schedules.find((r) => r.id === sched)).toEqual({
      id: sched,
      definition_id: def,
      frequency: "monthly",
      at_hour: 5,
      at_minute: 15,
      day_of_week: null,
      day_of_month: 31,
      enabled: true,
    });
    const orphan = randomUUID();
    // Only the report tables (merge mode: the other arrays empty leave their tables as they are).
    const others = Object.fromEntries(Object.entries(bundle).map(([key, v]) => [key, Array.isArray(v) ? [] : v]));
    const imported = await post("/config/bundle/import", {
      ...others,
      report_definitions: [
        ...bundle.report_definitions,
        { id: randomUUID(), name: "future", description: null, spec: { sections: [{ kind: "weather_map" }] } },
      ],
      report_schedules: [
        ...bundle.report_schedules,
        { id: orphan, definition_id: randomUUID(), frequency: "daily", at_hour: 1, at_minute: 0, day_of_week: null, day_of_month: null, enabled: true },
      ],
    });
    expect({ status: imported.status, error: (imported.body as Row).error }).toEqual({ status: 200, error: undefined });
    const notes = (imported.body as { notes: Row[] }).notes.filter((n) => String(n.table).startsWith("report_"));
    expect(notes).toEqual(
      expect.arrayContaining([
        { table: "report_definitions", code: "skipped_invalid_value", count: 1, field: "spec" },
        { table: "report_schedules", code: "skipped_missing_reference", count: 1, field: "definition_id" },
        { table: "report_schedules", code: "schedule_next_run_recomputed", count: bundle.report_schedules.length, field: "next_run_at" },
      ]),
    );
    // The schedule kept its zone (the record carries none): 05:15 in Berlin on the last day of a month.
    const after = (await get(`/reports/schedules/${sched}`)).body as Row;
    expect(after.timezone).toBe("Europe/Berlin");
    expect(localParts(Date.parse(after.next_run_at as string), "Europe/Berlin")).toMatchObject({ h: 5, mi: 15 });
    expectError(await get(`/reports/schedules/${orphan}`), 404, "not_found");
  });
});

describe("permissions", () => {
  it("matrix: no token, bad token, viewer, operator, admin, scoped, API token vs session", async () => {
    const def = idOf(await post("/reports/definitions", { name: "perm", spec: { sections: [{ kind: "inventory" }] } }));
    const viewer = await k.session("viewer");
    const viewerToken = await k.token("viewer");
    const operator = await k.session("operator");
    const operatorToken = await k.token("operator");
    const admin = await k.session("admin");
    const body = { name: "perm", spec: { sections: [{ kind: "inventory" }] } };
    expectError(await k.request("GET", "/reports/definitions", { token: null }), 401, "unauthorized");
    expectError(await k.request("GET", "/reports/definitions", { token: "bogus-token" }), 401, "unauthorized");
    expectError(await k.request("POST", `/reports/definitions/${def}/run`, { token: null, body: {} }), 401, "unauthorized");
    for (const t of [viewer, viewerToken]) {
      expect((await get("/reports/definitions", t)).status).toBe(200);
      expect((await get("/reports/runs", t)).status).toBe(200);
      expect((await get("/reports/section-kinds", t)).status).toBe(200);
      expectError(await post("/reports/definitions", body, t), 403, "permission_denied");
      expectError(await k.request("PUT", `/reports/definitions/${def}`, { token: t, body }), 403, "permission_denied");
      expectError(await post(`/reports/definitions/${def}/run`, {}, t), 403, "permission_denied");
      expectError(await post("/reports/schedules", { definition_id: def, frequency: "daily", at_hour: 1, at_minute: 0 }, t), 403, "permission_denied");
    }
    for (const t of [operator, operatorToken, admin]) {
      expect((await k.request("PUT", `/reports/definitions/${def}`, { token: t, body })).status).toBe(200);
      expect((await post(`/reports/definitions/${def}/run`, {}, t)).status).toBe(202);
    }
    // A scoped account's schedule is its own: others scoped elsewhere do not see it.
    const scopedA = await k.session("operator", { folders: [folderA] });
    const scopedB = await k.token("operator", { folders: [folderB] });
    const sched = idOf(await post("/reports/schedules", { definition_id: def, frequency: "daily", at_hour: 1, at_minute: 0 }, scopedA));
    expect((await get(`/reports/schedules/${sched}`, scopedA)).status).toBe(200);
    expectError(await get(`/reports/schedules/${sched}`, scopedB), 404, "not_found");
    expectError(await k.request("DELETE", `/reports/schedules/${sched}`, { token: scopedB }), 404, "not_found");
    expect(((await get("/reports/schedules", scopedB)).body as Row[]).map((r) => r.id)).not.toContain(sched);
    expect(((await get("/reports/schedules")).body as Row[]).map((r) => r.id)).toContain(sched);
  });
});

describe("OpenAPI", () => {
  it("documents every reports route with its envelopes and codes", async () => {
    const doc = (await k.http.get("/api/v1/openapi.json")).body;
    const paths = Object.fromEntries(Object.entries(doc.paths as Record<string, unknown>).filter(([p]) => p.startsWith("/api/v1/reports/")));
    expect(Object.keys(paths).sort()).toEqual([
      "/api/v1/reports/definitions",
      "/api/v1/reports/definitions/{id}",
      "/api/v1/reports/definitions/{id}/run",
      "/api/v1/reports/runs",
      "/api/v1/reports/runs/{id}",
      "/api/v1/reports/runs/{id}/{format}",
      "/api/v1/reports/schedules",
      "/api/v1/reports/schedules/{id}",
      "/api/v1/reports/section-kinds",
    ]);
    expect(responseProblems({ ...doc, paths })).toEqual([]);
    const put = doc.paths["/api/v1/reports/definitions/{id}"].put;
    expect(Object.keys(put.responses).sort()).toEqual(["200", "400", "401", "403", "404", "413", "500", "503"]);
    for (const c of ["unknown_section_kind", "invalid_section_params", "invalid_spec"]) expect(put.responses["400"].description).toContain(c);
    expect(put.responses["413"].description).toContain("document_too_large");
  });
});

describe("skeleton mode", () => {
  it("reads answer empty, writes 503", async () => {
    await k.stop();
    const s = await startTestKernel({
      skeleton: true,
      plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, notificationsPlugin, eventsPlugin, flowsPlugin, reportsPlugin],
    });
    k = s;
    try {
      for (const path of ["/reports/definitions", "/reports/runs", "/reports/schedules", "/reports/section-kinds"])
        expect(await get(path)).toMatchObject({ status: 200, body: [] });
      expectError(await post("/reports/definitions", { name: "x", spec: { sections: [] } }), 503, "store_unavailable");
      expectError(await k.request("PUT", `/reports/definitions/${randomUUID()}`, { body: { name: "x", spec: { sections: [] } } }), 503, "store_unavailable");
      expectError(await post(`/reports/definitions/${randomUUID()}/run`, {}), 503, "store_unavailable");
      expectError(await get(`/reports/runs/${randomUUID()}/pdf`), 503, "store_unavailable");
    } finally {
      await s.stop();
      k = undefined as unknown as TestKernel;
    }
  });
});
