/**
 * GET /metrics of a real kernel: the exposition read strictly (every line), the kernel's metrics moving (HTTP by route
 * pattern and status, Socket.IO connections and broadcasts, job runs, the pool, the store), and a plugin's own
 * metrics through ctx.metrics (prefix, label escaping, histogram timers, collect, name rules and clashes).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, type PluginContext } from "../../core/index.js";
import type { MetricCounter, MetricHistogram } from "../../core/metrics/PluginMetrics.js";
import { connectSocket } from "../support/socketClient.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { until } from "../support/wait.js";
import { parseExposition, sampleSum, sampleValue, scrape } from "./exposition.js";

const refusals: string[] = [];
let probeCounter: MetricCounter<"kind">;
let probeHistogram: MetricHistogram<"step">;
let probeCtx: PluginContext;
let jobRuns = 0;
const staticDir = mkdtempSync(join(tmpdir(), "nms-metrics-static-"));
writeFileSync(join(staticDir, "hello.txt"), "hello");

const probePlugin = definePlugin({
  id: "metrics-probe",
  version: "1.0.0",
  kernel: "^0.1.0",
  channels: [{ name: "ticks", permission: "read", scoped: false }],
  staticAssets: [{ mount: "/probe-static", dir: staticDir }],
  jobs: [
    {
      name: "tick",
      handler: async (job) => {
        jobRuns++;
        if ((job.data as { fail?: boolean } | undefined)?.fail) throw new Error("asked to fail");
      },
    },
  ],
  start(ctx) {
    probeCtx = ctx;
    probeCounter = ctx.metrics.counter({ name: "things_total", help: 'Things seen, by kind (a "quoted" \\ help).', labelNames: ["kind"] });
    probeHistogram = ctx.metrics.histogram({ name: "step_seconds", help: "Step durations.", labelNames: ["step"], buckets: [0.1, 1, 10] });
    ctx.metrics.gauge({ name: "queue_depth", help: "Items waiting.", collect: (g) => g.set({}, 42) });
    ctx.metrics.counter({
      name: "kept_total",
      help: "Totals kept by the plugin, read on scrape.",
      labelNames: ["listener"],
      collect: (report) => {
        report({ listener: "a" }, 7);
        report({ listener: "b" }, 3);
      },
    });
    ctx.metrics.gauge({
      name: "broken",
      help: "A gauge whose collect fails: the scrape still answers.",
      collect: () => {
        throw new Error("collect failed");
      },
    });
    const tries: [string, () => unknown][] = [
      ["clash", () => ctx.metrics.counter({ name: "things_total", help: "again" })],
      ["no _total", () => ctx.metrics.counter({ name: "things", help: "x" })],
      ["bad name", () => ctx.metrics.gauge({ name: "Bad-Name", help: "x" })],
      ["no help", () => ctx.metrics.gauge({ name: "nohelp", help: " " })],
      ["le label", () => ctx.metrics.histogram({ name: "h_seconds", help: "x", labelNames: ["le"] })],
      ["reserved label", () => ctx.metrics.gauge({ name: "g2", help: "x", labelNames: ["__x"] })],
      ["bad buckets", () => ctx.metrics.histogram({ name: "h2_seconds", help: "x", buckets: [1, 0.5] })],
    ];
    for (const [what, fn] of tries) {
      try {
        fn();
      } catch (err) {
        refusals.push(`${what}: ${(err as Error).message}`);
      }
    }
  },
});

let k: TestKernel;

beforeAll(async () => {
  k = await startTestKernel({ plugins: [probePlugin] });
});
afterAll(async () => {
  await k?.stop();
});

describe("GET /metrics", () => {
  it("answers the text format 0.0.4, every line well formed, outside /api/v1", async () => {
    const res = await fetch(`${k.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = parseExposition(await res.text());
    // The kernel's, the plugin's and the process's families are all there, with HELP and TYPE.
    for (const [name, type] of [
      ["nms_build_info", "gauge"],
      ["nms_http_request_duration_seconds", "histogram"],
      ["nms_realtime_connections", "gauge"],
      ["nms_realtime_broadcasts_total", "counter"],
      ["nms_job_runs_total", "counter"],
      ["nms_job_duration_seconds", "histogram"],
      ["nms_db_pool_connections", "gauge"],
      ["nms_db_pool_waiting_requests", "gauge"],
      ["nms_db_pool_max_connections", "gauge"],
      ["nms_store_info", "gauge"],
      ["nms_metrics_probe_things_total", "counter"],
      ["nms_metrics_probe_step_seconds", "histogram"],
      ["nms_metrics_probe_queue_depth", "gauge"],
      ["process_cpu_user_seconds_total", "counter"],
      ["nodejs_eventloop_lag_p99_seconds", "gauge"],
      ["nodejs_heap_size_used_bytes", "gauge"],
    ] as const) {
      expect({ name, type: families.get(name)?.type }).toEqual({ name, type });
    }
    expect(families.get("nms_metrics_probe_things_total")!.help).toBe('Things seen, by kind (a "quoted" \\ help).');
    expect(sampleValue(families, "nms_store_info", { kind: "external" })).toBe(1);
    // The test kernel runs on an external database: the embedded server's gauge is absent.
    expect(families.has("nms_store_embedded_up")).toBe(false);
    expect(await fetch(`${k.url}/api/v1/metrics`).then((r) => r.status)).toBe(404);
  });

  it("HEAD answers without a body; other methods 405 with the envelope and Allow", async () => {
    const head = await fetch(`${k.url}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await fetch(`${k.url}/metrics`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(await post.json()).toEqual({ error: { code: "method_not_allowed", message: expect.any(String) } });
  });

  it("counts HTTP requests by route pattern (never the raw path) and status", async () => {
    const before = await scrape(k.url);
    const id = "00000000-0000-4000-8000-000000000000";
    await k.request("GET", `/accounts/${id}`);
    await k.request("GET", `/accounts/${id}`);
    await k.request("GET", "/health");
    await k.request("GET", "/accounts", { token: null });
    await k.request("GET", "/no/such/route/123");
    expect((await fetch(`${k.url}/probe-static/hello.txt`)).status).toBe(200);
    expect((await fetch(`${k.url}/probe-static/missing-456.txt`)).status).toBe(404);
    const after = await scrape(k.url);
    const count = (f: typeof after, labels: Record<string, string>) => sampleSum(f, "nms_http_request_duration_seconds_count", labels);
    expect(count(after, { route: "/api/v1/accounts/:id", method: "GET" }) - count(before, { route: "/api/v1/accounts/:id", method: "GET" })).toBe(2);
    expect(count(after, { route: "/api/v1/health", status: "200" }) - count(before, { route: "/api/v1/health", status: "200" })).toBe(1);
    expect(count(after, { route: "/api/v1/accounts", status: "401" }) - count(before, { route: "/api/v1/accounts", status: "401" })).toBe(1);
    expect(count(after, { route: "unmatched", status: "404" }) - count(before, { route: "unmatched", status: "404" })).toBe(2);
    expect(count(after, { route: "static", status: "200" }) - count(before, { route: "static", status: "200" })).toBe(1);
    // No series carries a raw id or path.
    for (const s of after.get("nms_http_request_duration_seconds")!.samples) {
      expect(s.labels.route).not.toContain(id);
      expect(s.labels.route).not.toContain("123");
      expect(s.labels.route).not.toContain("hello");
    }
  });

  it("moves the Socket.IO connections gauge and the broadcasts counter by channel", async () => {
    const socket = await connectSocket(k.url, k.adminToken);
    try {
      expect((await socket.subscribe("metrics-probe.ticks")).ok).toBe(true);
      expect(sampleValue(await scrape(k.url), "nms_realtime_connections")).toBe(1);
      probeCtx.realtime.publish("ticks", "tick", { n: 1 });
      probeCtx.realtime.publish("ticks", "tick", { n: 2 });
      await socket.waitFor("metrics-probe.tick", (p) => (p as { n: number }).n === 2);
      expect(sampleValue(await scrape(k.url), "nms_realtime_broadcasts_total", { channel: "metrics-probe.ticks" })).toBe(2);
    } finally {
      socket.close();
    }
    await until("the socket to be gone", async () => sampleValue(await scrape(k.url), "nms_realtime_connections") === 0);
  });

  it("counts job runs and durations by job and outcome", async () => {
    await probeCtx.jobs.now("tick");
    await probeCtx.jobs.now("tick", { fail: true });
    await until("both runs to be counted", async () => {
      const f = await scrape(k.url);
      return (
        sampleValue(f, "nms_job_runs_total", { job: "metrics-probe.tick", outcome: "success" }) === 1 &&
        sampleValue(f, "nms_job_runs_total", { job: "metrics-probe.tick", outcome: "failure" }) === 1 &&
        sampleValue(f, "nms_job_duration_seconds_count", { job: "metrics-probe.tick", outcome: "failure" }) === 1
      );
    });
    expect(jobRuns).toBe(2);
  });

  it("reports the pool's connections", async () => {
    const f = await scrape(k.url);
    const idle = sampleValue(f, "nms_db_pool_connections", { state: "idle" })!;
    const inUse = sampleValue(f, "nms_db_pool_connections", { state: "in_use" })!;
    expect(idle + inUse).toBeGreaterThan(0);
    expect(idle + inUse).toBeLessThanOrEqual(sampleValue(f, "nms_db_pool_max_connections")!);
    expect(sampleValue(f, "nms_db_pool_waiting_requests")).toBe(0);
  });

  it("counts the connections of the pool's statement-timeout siblings too", async () => {
    const before = await scrape(k.url);
    const max = sampleValue(before, "nms_db_pool_max_connections")!;
    // A time limit no query of the kernel uses: a sibling pool made now, as large as the pool, one connection open.
    const timed = probeCtx.store.timedQuery(4321, "SELECT pg_sleep(1)");
    const during = await until("the sibling's connection in use", async () => {
      const f = await scrape(k.url);
      return sampleValue(f, "nms_db_pool_max_connections") === 2 * max ? f : null;
    });
    expect(sampleValue(during, "nms_db_pool_connections", { state: "in_use" })).toBeGreaterThanOrEqual(1);
    await timed;
  });
});

describe("a plugin's metrics (ctx.metrics)", () => {
  it("prefixes nms_<plugin>_, escapes label values, and keeps histograms consistent", async () => {
    probeCounter.inc({ kind: 'a "quoted"\\back\nslash' });
    probeCounter.inc({ kind: "plain" }, 5);
    probeHistogram.observe({ step: "x" }, 0.05);
    probeHistogram.observe({ step: "x" }, 5);
    const stop = probeHistogram.startTimer({ step: "timer" });
    expect(stop()).toBeGreaterThanOrEqual(0);
    const f = await scrape(k.url);
    expect(sampleValue(f, "nms_metrics_probe_things_total", { kind: 'a "quoted"\\back\nslash' })).toBe(1);
    expect(sampleValue(f, "nms_metrics_probe_things_total", { kind: "plain" })).toBe(5);
    expect(sampleValue(f, "nms_metrics_probe_step_seconds_bucket", { step: "x", le: "0.1" })).toBe(1);
    expect(sampleValue(f, "nms_metrics_probe_step_seconds_bucket", { step: "x", le: "10" })).toBe(2);
    expect(sampleValue(f, "nms_metrics_probe_step_seconds_bucket", { step: "x", le: "+Inf" })).toBe(2);
    expect(sampleValue(f, "nms_metrics_probe_step_seconds_count", { step: "timer" })).toBe(1);
    expect(sampleValue(f, "nms_metrics_probe_queue_depth")).toBe(42);
    expect(sampleValue(f, "nms_metrics_probe_kept_total", { listener: "a" })).toBe(7);
    expect(sampleValue(f, "nms_metrics_probe_kept_total", { listener: "b" })).toBe(3);
    // A second scrape reads the totals again (not added up).
    expect(sampleValue(await scrape(k.url), "nms_metrics_probe_kept_total", { listener: "a" })).toBe(7);
    // The failing collect cost its own gauge's value only, and was logged.
    expect(k.logs.some((l) => l.includes("metric collect failed") && l.includes("nms_metrics_probe_broken"))).toBe(true);
  });

  it("refuses a name clash, names not in snake_case, counters without _total, empty help, reserved labels and bad buckets", () => {
    expect(refusals).toEqual([
      expect.stringMatching(/clash: .*nms_metrics_probe_things_total is already registered/),
      expect.stringMatching(/no _total: .*ends in _total/),
      expect.stringMatching(/bad name: .*snake_case/),
      expect.stringMatching(/no help: .*help/),
      expect.stringMatching(/le label: .*reserved/),
      expect.stringMatching(/reserved label: .*__/),
      expect.stringMatching(/bad buckets: .*increasing/),
    ]);
  });
});
