/** `nms api <METHOD> <route> [json]` (the dashboard plugin's CLI command) against a real kernel. */
import { apiCommand } from "../../plugins/dashboard/lib/apiCommand.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import type { CommandEnvironment } from "../../core/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
let out: string[];
let err: string[];

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin] });
});
afterAll(async () => {
  delete process.env.NMS_URL;
  delete process.env.NMS_TOKEN;
  await k?.stop();
});
const realOut = process.stdout.write.bind(process.stdout);
const realErr = process.stderr.write.bind(process.stderr);
beforeEach(() => {
  out = [];
  err = [];
  process.stdout.write = ((s: unknown) => (out.push(String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: unknown) => (err.push(String(s)), true)) as typeof process.stderr.write;
  process.env.NMS_URL = k.url;
  process.env.NMS_TOKEN = k.adminToken;
});
afterEach(() => {
  process.stdout.write = realOut;
  process.stderr.write = realErr;
});

const env = { config: { host: "127.0.0.1", port: 1 } } as unknown as CommandEnvironment;

describe("nms api", () => {
  it("POSTs a body and GETs the result, printing JSON; the /api/v1 prefix is optional", async () => {
    expect(await apiCommand.run(["POST", "/nodes", JSON.stringify({ name: "cli-node", address: "192.0.2.50" })], env)).toBe(0);
    const { id } = JSON.parse(out.join(""));
    out = [];
    expect(await apiCommand.run(["get", `/api/v1/nodes/${id}`], env)).toBe(0);
    expect(JSON.parse(out.join(""))).toEqual(expect.objectContaining({ id, name: "cli-node" }));
  });

  it("prints the error envelope on stderr and exits 1; 401 without a token", async () => {
    expect(await apiCommand.run(["POST", "/nodes", '{"name":"","address":"x"}'], env)).toBe(1);
    expect(err.join("")).toMatch(/^400 \{"error":\{"code":"[a-z_]+","message":/);
    delete process.env.NMS_TOKEN;
    err = [];
    expect(await apiCommand.run(["GET", "/alerts"], env)).toBe(1);
    expect(err.join("")).toContain('401 {"error":{"code":"unauthorized"');
    expect(err.join("")).not.toContain(k.adminToken);
  });

  it("refuses bad usage with exit 2: unknown method, missing route, a body that is not JSON", async () => {
    expect(await apiCommand.run(["FETCH", "/alerts"], env)).toBe(2);
    expect(await apiCommand.run(["GET"], env)).toBe(2);
    expect(await apiCommand.run(["POST", "/nodes", "{nope"], env)).toBe(2);
    expect(err.join("")).toContain("not valid JSON");
  });

  it("says where a next page is (X-Next-Cursor) on paginated lists", async () => {
    for (let i = 0; i < 3; i++) await apiCommand.run(["POST", "/nodes", JSON.stringify({ name: `cli-page-${i}`, address: `192.0.2.${60 + i}` })], env);
    err = [];
    out = [];
    expect(await apiCommand.run(["GET", "/nodes?limit=2"], env)).toBe(0);
    expect(JSON.parse(out.join(""))).toHaveLength(2);
    expect(err.join("")).toMatch(/next page: cursor=\S+/);
  });
});
