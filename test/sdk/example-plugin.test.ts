import { existsSync } from "node:fs";
import { join } from "node:path";
import { BOOTSTRAP_TOKEN } from "../support/testKernel.js";
import { ROOT, spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";

const EXAMPLE = join(ROOT, "examples/alert-relay");

describe("the example plugin, loaded into a running service from its own folder", () => {
  let k: SpawnedKernel;

  beforeAll(async () => {
    if (!existsSync(join(EXAMPLE, "dist/index.js"))) throw new Error("examples/alert-relay is not built: npm test builds it (scripts/test-examples.mjs)");
    k = await spawnKernel({
      env: {
        NMS_BUILTIN_PLUGINS: "true",
        NMS_PLUGINS: EXAMPLE,
        NMS_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        "NMS__pluginConfig__alert-relay__minSeverity": "critical",
        NMS__pluginConfig__polling__embeddedPoller: "false",
      },
      timeoutMs: 45000,
    });
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("boots with it after the built-in plugins it depends on, and serves its routes", async () => {
    expect(k.stdout()).toContain(
      "plugins: inventory, polling, topology, alerts, notifications, alert-relay, flows, events, analysis, dashboard, forwarding, ipam, netcloud, reports)",
    );
    const health = (await (await fetch(`${k.url}/api/v1/health`)).json()) as { plugins: { id: string; version: string }[] };
    expect(health.plugins).toContainEqual({ id: "alert-relay", version: "0.1.0" });
    const res = await fetch(`${k.url}/api/v1/alert-relay/deliveries`, { headers: { Authorization: `Bearer ${BOOTSTRAP_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
    const test = await fetch(`${k.url}/api/v1/alert-relay/test`, {
      method: "POST",
      headers: { Authorization: `Bearer ${BOOTSTRAP_TOKEN}`, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(test.status).toBe(409);
    expect(((await test.json()) as { error: { code: string } }).error.code).toBe("relay_not_configured");
  });

  it("lists its routes in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${k.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/alert-relay/deliveries", "/api/v1/alert-relay/test"]));
  });
});
