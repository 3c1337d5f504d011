/**
 * The typed client (clients/typescript) against a real kernel: typed calls, the error envelope as NmsApiError, the
 * keyset iterator over X-Next-Cursor, the history cursor, login, and typed Socket.IO channels honouring scope.
 */
import {
  alertHistory,
  connectRealtime,
  createClient,
  login,
  NmsApiError,
  paginate,
  unwrap,
  type NmsRealtime,
  type RealtimeEvents,
} from "../../clients/typescript/src/index.js";
import { RealtimeError } from "../../clients/typescript/src/realtime.js";
import { alertsPlugin } from "../../plugins/alerts/index.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { pollingPlugin } from "../../plugins/polling/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
const sockets: NmsRealtime[] = [];

beforeAll(async () => {
  k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin, alertsPlugin] });
  await k.kernel.auth.createAccount({ username: "client-viewer", password: "client-password-1", role: "viewer", scope: "All" });
}, 60_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  await k?.stop();
});

const live = (token: string | null) => {
  const s = connectRealtime({ baseUrl: k.url, token, socket: { reconnection: false } });
  sockets.push(s);
  return s;
};

function next<E extends keyof RealtimeEvents>(s: NmsRealtime, event: E, where: (p: RealtimeEvents[E]) => boolean, ms = 5000): Promise<RealtimeEvents[E]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${ms} ms`)), ms);
    const off = s.on(event, (p) => {
      if (!where(p)) return;
      clearTimeout(timer);
      off();
      resolve(p);
    });
  });
}

describe("typed REST client", () => {
  it("creates and reads a node with typed bodies; a bad body is an NmsApiError with the envelope's code", async () => {
    const api = createClient({ baseUrl: k.url, token: k.adminToken });
    const { id } = await unwrap(api.POST("/api/v1/nodes", { body: { name: "client-n1", address: "192.0.2.10" } }));
    const node = await unwrap(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } }));
    expect(node.name).toBe("client-n1");
    expect(node.address).toBe("192.0.2.10");

    const bad = await unwrap(api.POST("/api/v1/nodes", { body: { name: "", address: "not-an-ip" } })).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(NmsApiError);
    expect((bad as NmsApiError).status).toBe(400);
    expect((bad as NmsApiError).code).toMatch(/^[a-z_]+$/);

    const { error, response } = await api.GET("/api/v1/nodes/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } });
    expect(response.status).toBe(404);
    expect(error?.error.code).toBe("not_found");
  });

  it("answers 401 unauthorized without a token, and reads the token from a function on every request", async () => {
    let token: string | null = null;
    const api = createClient({ baseUrl: k.url, token: () => token });
    const denied = await unwrap(api.GET("/api/v1/auth/me")).catch((e: unknown) => e);
    expect(denied).toEqual(expect.objectContaining({ status: 401, code: "unauthorized" }));
    const session = await login(api, "client-viewer", "client-password-1");
    token = session.token;
    const me = await unwrap(api.GET("/api/v1/auth/me"));
    expect(me).toEqual(expect.objectContaining({ username: "client-viewer", role: "viewer" }));
    const wrong = await login(api, "client-viewer", "wrong-password").catch((e: unknown) => e);
    expect(wrong).toEqual(expect.objectContaining({ status: 401 }));
  });

  it("walks a keyset-paginated list page by page (X-Next-Cursor) and yields every row once", async () => {
    const api = createClient({ baseUrl: k.url, token: k.adminToken });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { id } = await unwrap(
        api.POST("/api/v1/thresholds", { body: { metric: `client_metric_${i}`, scope_level: "global", direction: "above", warning_above: 10 + i } }),
      );
      made.push(id);
    }
    const seen: string[] = [];
    for await (const rule of paginate(api, "/api/v1/thresholds", { query: { limit: 2 } })) seen.push(rule.id);
    expect(seen.filter((id) => made.includes(id)).sort()).toEqual([...made].sort());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("iterates alert history through before/before_id (empty history: no rows, no error)", async () => {
    const api = createClient({ baseUrl: k.url, token: k.adminToken });
    const rows = [];
    for await (const row of alertHistory(api, { limit: 10 })) rows.push(row);
    expect(rows).toEqual([]);
  });
});

describe("typed Socket.IO helper", () => {
  it("refuses a bad token at the handshake with the service's code", async () => {
    const s = live("not-a-token");
    await expect(s.ready()).rejects.toEqual(expect.objectContaining({ code: "unauthorized" }));
  });

  it("delivers inventory.changes to a subscriber; a folder-scoped subscriber gets only its folder's nodes", async () => {
    const api = createClient({ baseUrl: k.url, token: k.adminToken });
    const mine = await unwrap(api.POST("/api/v1/node-groups", { body: { name: "client-scope-a" } }));
    const other = await unwrap(api.POST("/api/v1/node-groups", { body: { name: "client-scope-b" } }));
    const scoped = await k.session("viewer", { folders: [mine.id] });

    const all = live(k.adminToken);
    const limited = live(scoped);
    await Promise.all([all.ready(), limited.ready()]);
    await all.subscribe("inventory.changes");
    await limited.subscribe("inventory.changes");
    const seenByLimited: string[] = [];
    limited.on("inventory.node.created", (e) => seenByLimited.push(e.name));

    const outside = next(all, "inventory.node.created", (e) => e.name === "client-outside");
    const inside = next(limited, "inventory.node.created", (e) => e.name === "client-inside");
    await unwrap(api.POST("/api/v1/nodes", { body: { name: "client-outside", address: "192.0.2.20", group_id: other.id } }));
    await unwrap(api.POST("/api/v1/nodes", { body: { name: "client-inside", address: "192.0.2.21", group_id: mine.id } }));
    expect((await outside).group_id).toBe(other.id);
    expect((await inside).folder_path).toContain(mine.id);
    expect(seenByLimited).toEqual(["client-inside"]);
  });

  it("rejects a subscribe the caller may not make with the service's code", async () => {
    const viewer = await k.session("viewer");
    const s = live(viewer);
    await s.ready();
    const refused = await s.subscribe("polling.sweeps").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RealtimeError);
    expect((refused as RealtimeError).code).toBe("permission_denied");
    const badFilter = await s.subscribe("events.live", { kind: "nope" as "syslog" }).catch((e: unknown) => e);
    expect((badFilter as RealtimeError).code).toMatch(/unknown_channel|invalid_filter/);
  });
});
