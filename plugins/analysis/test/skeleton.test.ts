import { randomUUID } from "node:crypto";
import { expectError } from "../../../test/support/assertions.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { eventsPlugin } from "../../events/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { analysisPlugin } from "../index.js";

let k: TestKernel;

beforeAll(async () => {
  k = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin, analysisPlugin] });
}, 60000);

afterAll(async () => {
  await k?.stop();
});

describe("skeleton mode (no store)", () => {
  test("saved findings and schedules read as [], the tool registry still answers", async () => {
    expect(await k.request("GET", "/analysis/findings")).toMatchObject({ status: 200, body: [] });
    expect(await k.request("GET", `/analysis/findings?before=2026-01-01T00:00:00Z&before_id=${randomUUID()}`)).toMatchObject({ status: 200, body: [] });
    expect(await k.request("GET", "/analysis/schedules")).toMatchObject({ status: 200, body: [] });
    const tools = await k.request("GET", "/analysis/tools");
    expect(tools.status).toBe(200);
    expect((tools.body as unknown[]).length).toBe(5);
    // Still authenticated: no token is 401 even where the answer is empty.
    expectError(await k.request("GET", "/analysis/findings", { token: null }), 401, "unauthorized");
  });

  test("writes and job reads answer 503 store_unavailable", async () => {
    expectError(await k.request("POST", "/analysis/jobs", { body: { tool: "silent_nodes", scope_kind: "all" } }), 503, "store_unavailable");
    expectError(await k.request("GET", `/analysis/jobs/${randomUUID()}`), 503, "store_unavailable");
    expectError(await k.request("GET", `/analysis/jobs/${randomUUID()}/findings`), 503, "store_unavailable");
    const schedule = { tool: "silent_nodes", scope_kind: "all", frequency: "daily", at_hour: 1, at_minute: 0 };
    expectError(await k.request("POST", "/analysis/schedules", { body: schedule }), 503, "store_unavailable");
    expectError(await k.request("PUT", `/analysis/schedules/${randomUUID()}`, { body: schedule }), 503, "store_unavailable");
    expectError(await k.request("DELETE", `/analysis/schedules/${randomUUID()}`), 503, "store_unavailable");
  });
});
