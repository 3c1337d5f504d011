/**
 * `nms sweep` and `nms report run`: jobs of a running service (a kernel in this process) started and followed through
 * its REST API by the built CLI in a child process. Its stderr is no terminal here, so no progress bar is drawn: the
 * output is what a script sees.
 */
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, type PluginManifest } from "../../core/index.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { eventsPlugin } from "../../plugins/events/index.js";
import { flowsPlugin } from "../../plugins/flows/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { notificationsPlugin } from "../../plugins/notifications/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { reportsPlugin } from "../../plugins/reports/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { nmsAsync } from "./support.js";

/** A plugin whose jobs hold short locks (Agenda's lock timers would otherwise keep jest alive long after the test). */
const shortLocks = (p: PluginManifest): PluginManifest => definePlugin({ ...p, jobs: (p.jobs ?? []).map((j) => ({ ...j, lockLifetimeMs: 2000 })) });

let k: TestKernel;
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), "nms-cli-jobs-"));

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, shortLocks(pollingPlugin), alertsPlugin, notificationsPlugin, eventsPlugin, flowsPlugin, shortLocks(reportsPlugin)],
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: null } },
        flows: { udp: null },
      },
    },
  });
  env = { NMS_URL: k.url, NMS_TOKEN: k.adminToken };
}, 60000);
afterAll(async () => {
  await k?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${k.url}/api/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${k.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** A loopback UDP port nothing listens on (bound, then closed). */
async function silentPort(): Promise<number> {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("nms sweep", () => {
  it("starts a sweep, follows it to the end and prints the summary; --json prints the whole result", async () => {
    const credential = await post("/credentials", { name: "cli sweep", kind: "snmp_v2c", community: "nobody-answers" });
    const port = String(await silentPort());
    const text = await nmsAsync(["sweep", "127.0.0.8/30", "--credential", credential, "--port", port, "--timeout-ms", "100", "--interval-ms", "100"], env);
    expect(text.err).toBe("");
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^sweep [0-9a-f-]{36} of 127\.0\.0\.8\/30 done: 2 addresses probed, 0 answered\n$/);

    const json = await nmsAsync(
      ["sweep", "127.0.0.9", "--credential", credential, "--port", port, "--timeout-ms", "100", "--json", "--interval-ms", "100"],
      env,
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({
      cidr: "127.0.0.9/32",
      status: "done",
      total: 1,
      probed: 1,
      found: 0,
      results: [],
      import_body: { nodes: [] },
    });
  }, 60000);

  it("passes the service's refusal on with exit 2, and needs a URL", async () => {
    const bad = await nmsAsync(["sweep", "not-a-range", "--credential", "00000000-0000-4000-8000-000000000000"], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^nms: the service answered 400 \w+: /);
    const noUrl = await nmsAsync(["sweep", "127.0.0.9", "--credential", "00000000-0000-4000-8000-000000000000"], { NMS_TOKEN: "x" });
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain("--url");
  });
});

describe("nms report run", () => {
  it("renders a definition, waits for the run and downloads the output in the format asked", async () => {
    const definition = await post("/reports/definitions", { name: "CLI inventory", spec: { sections: [{ kind: "inventory" }] } });
    const pdf = join(dir, "inventory.pdf");
    const r = await nmsAsync(["report", "run", definition, "--out", pdf, "--interval-ms", "200"], env);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^report run [0-9a-f-]{36} \(CLI inventory\) succeeded: .*pdf \d+ bytes.*\nwrote PDF \(\d+ bytes\) to .*inventory\.pdf\n$/);
    expect(readFileSync(pdf).subarray(0, 5).toString("latin1")).toBe("%PDF-");

    const csv = await nmsAsync(["report", "run", definition, "--out", "-", "--format", "csv", "--interval-ms", "200"], env);
    expect(csv.code).toBe(0);
    expect(csv.out.length).toBeGreaterThan(0);
    expect(csv.out).not.toContain("%PDF");

    const json = await nmsAsync(["report", "run", definition, "--json", "--out", join(dir, "r.html"), "--interval-ms", "200"], env);
    expect(json.code).toBe(0);
    const run = JSON.parse(json.out) as { status: string; written: { format: string; bytes: number } };
    expect(run).toMatchObject({ status: "succeeded", definition_name: "CLI inventory", written: { format: "html" } });
    expect(readFileSync(join(dir, "r.html"), "utf8")).toContain("<html");
  }, 90000);

  it("says when there is no such definition (exit 2)", async () => {
    const r = await nmsAsync(["report", "run", "00000000-0000-4000-8000-000000000000"], env);
    expect(r.code).toBe(2);
    expect(r.err).toContain("404 not_found");
  });
});
