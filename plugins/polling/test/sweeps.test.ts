import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { closeAllSockets, connectSocket } from "../../../test/support/socketClient.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { definePlugin, type PluginManifest } from "../../../core/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { snmpGet, SYSTEM_OIDS } from "../checks/SnmpGet.js";
import { pollingPlugin } from "../index.js";
import type { SnmpCredential } from "../poller/types.js";
import { parseSweepRange, SWEEP_CHANNEL } from "../services/SweepService.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const MISSING = "00000000-0000-4000-8000-000000000000";

/**
 * The polling manifest with this part's job and channel, whether or not index.ts declares them yet. The sweep job gets
 * a short lock here: Agenda starts a timer of half the lock lifetime per run that nothing cancels, which would keep
 * jest alive for 15 minutes with the production 30 (2 s is what the test kernel gives every job).
 */
function pollingForTests(): PluginManifest {
  const sweepJob = (pollingPlugin.jobs ?? []).find((j) => j.name === "sweep")!;
  const jobs = (pollingPlugin.jobs ?? []).filter((j) => j !== sweepJob);
  const channels = pollingPlugin.channels ?? [];
  return definePlugin({
    ...(pollingPlugin as PluginManifest),
    jobs: [...jobs, { ...sweepJob, lockLifetimeMs: 2000 }],
    channels: channels.some((c) => c.name === SWEEP_CHANNEL.name) ? channels : [...channels, SWEEP_CHANNEL],
  });
}

// ---- real Net-SNMP agents bound to single loopback addresses ----
// test/support/snmpAgents.ts binds its agents to 127.0.0.1 only; a sweep needs agents on some addresses of a range and
// silence on the others, so this file starts its own with the same private-configuration shape.

const COMMUNITY = "sweep-public";
const V3 = { user: "sweepuser", auth: "sweepauthpass", priv: "sweepprivpass" };

interface Agent {
  stop(): Promise<void>;
}
const agents: Agent[] = [];

/** A UDP port free on every given address at once (so one sweep port reaches each agent). */
async function portFreeOn(addresses: string[]): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = createSocket("udp4");
    await new Promise<void>((resolve) => first.bind(0, addresses[0], () => resolve()));
    const port = first.address().port;
    const others = addresses.slice(1).map(() => createSocket("udp4"));
    const ok = await Promise.all(
      others.map(
        (s, i) =>
          new Promise<boolean>((resolve) => {
            s.once("error", () => resolve(false));
            s.bind(port, addresses[i + 1], () => resolve(true));
          }),
      ),
    );
    for (const s of [first, ...others]) await new Promise<void>((resolve) => s.close(() => resolve())).catch(() => undefined);
    if (ok.every(Boolean)) return port;
  }
  throw new Error("no UDP port free on every address");
}

async function startSnmpd(address: string, port: number, opts: { v2c: boolean; sysName: string }): Promise<Agent> {
  const dir = mkdtempSync(join(tmpdir(), "nms-snmpd-"));
  writeFileSync(
    join(dir, "snmpd.conf"),
    [
      `agentAddress udp:${address}:${port}`,
      opts.v2c ? `rocommunity ${COMMUNITY} default` : "",
      `createUser ${V3.user} SHA "${V3.auth}" AES "${V3.priv}"`,
      `rouser ${V3.user} priv`,
      `sysName ${opts.sysName}`,
      "master no",
      "",
    ].join("\n"),
  );
  const binary = ["/usr/sbin/snmpd", "/usr/local/sbin/snmpd"].find((f) => existsSync(f)) ?? "snmpd"; // sbin is often off a non-root PATH
  const child: ChildProcess = spawn(binary, ["-f", "-C", "-c", join(dir, "snmpd.conf"), "-Lf", join(dir, "snmpd.log"), "-I", "-smux", "-p", join(dir, "pid")], {
    env: { ...process.env, SNMP_PERSISTENT_DIR: join(dir, "persist"), MIBS: ":", MIBDIRS: dir },
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const agent: Agent = {
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  agents.push(agent);
  const probe: SnmpCredential = {
    version: "3",
    user: V3.user,
    security_level: "authPriv",
    auth_protocol: "SHA",
    auth_key: V3.auth,
    priv_protocol: "AES",
    priv_key: V3.priv,
  };
  for (let i = 0; i < 50; i++) {
    if ((await snmpGet(address, probe, [SYSTEM_OIDS.sysUpTime], { port, timeoutMs: 200, retries: 0 })).ok) return agent;
    if (child.exitCode !== null) break;
  }
  throw new Error(`snmpd on ${address}:${port} did not answer (is the snmpd package installed?)`);
}

// ---- the kernel ----

let k: TestKernel;
let port: number;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};

async function post(path: string, body: object, token = k.adminToken): Promise<string> {
  const res = await k.http.post(path).set(bearer(token)).send(body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body.id as string;
}

beforeAll(async () => {
  port = await portFreeOn(["127.0.0.2", "127.0.0.5"]);
  // 127.0.0.2 speaks v2c and v3; 127.0.0.5 only v3; the other addresses of the range have no agent on the port.
  await startSnmpd("127.0.0.2", port, { v2c: true, sysName: "sweep-agent-2" });
  await startSnmpd("127.0.0.5", port, { v2c: false, sysName: "sweep-agent-5" });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingForTests()],
    overrides: { pluginConfig: { polling: { embeddedPoller: false }, inventory: { sweepSize: 64 } } },
  });
  ids.wrong = await post("/api/v1/credentials", { name: "wrong community", kind: "snmp_v2c", community: "not-this-one" });
  ids.v2c = await post("/api/v1/credentials", { name: "sweep v2c", kind: "snmp_v2c", community: COMMUNITY });
  ids.v3 = await post("/api/v1/credentials", {
    name: "sweep v3",
    kind: "snmp_v3",
    user: V3.user,
    security_level: "authPriv",
    auth_protocol: "SHA",
    auth_key: V3.auth,
    priv_protocol: "AES",
    priv_key: V3.priv,
  });
  ids.http = await post("/api/v1/credentials", { name: "web", kind: "http", mode: "bearer", token: "tok-abcdef" });
  ids.profile = await post("/api/v1/profiles", { name: "Net-SNMP Linux" });
  // Net-SNMP's agent on Linux says sysObjectID 1.3.6.1.4.1.8072.3.2.10
  await post("/api/v1/classification-rules", { profile_id: ids.profile, sysobjectid_prefix: "1.3.6.1.4.1.8072", vendor: "Net-SNMP", model: "Linux agent" });
  ids.folder = (await rawQuery<{ id: string }>(k.databaseUrl!, "INSERT INTO inventory.node_groups (name) VALUES ('scoped') RETURNING id"))[0].id;
  tokens.operator = await k.token("operator");
  tokens.viewer = await k.token("viewer");
  tokens.scoped = await k.token("operator", { folders: [ids.folder] });
});
afterAll(async () => {
  closeAllSockets();
  await k?.stop();
  for (const a of agents) await a.stop();
});

const sweepBody = (over: Record<string, unknown> = {}) => ({
  cidr: "127.0.0.0/29",
  credential_ids: [ids.wrong, ids.v2c, ids.v3],
  port,
  timeout_ms: 400,
  ...over,
});

async function waitDone(id: string, ms = 20000): Promise<Record<string, unknown>> {
  const until = Date.now() + ms;
  for (;;) {
    const res = await k.http.get(`/api/v1/discovery/sweeps/${id}`).set(bearer(tokens.operator));
    if (res.body.status === "done" || res.body.status === "failed" || Date.now() > until) return res.body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a sweep over a loopback range where some addresses answer", () => {
  let id: string;
  let detail: Record<string, unknown>;
  const progress: { status: string; probed: number; found: number }[] = [];

  beforeAll(async () => {
    const socket = await connectSocket(k.url, tokens.operator);
    expect(await socket.subscribe(`polling.${SWEEP_CHANNEL.name}`)).toEqual({ ok: true, channel: "polling.sweeps" });
    const started = Date.now();
    id = await post("/api/v1/discovery/sweeps", sweepBody(), tokens.operator);
    await socket.waitFor(
      "polling.sweep.progress",
      (p) => (p as { id: string; status: string }).id === id && (p as { status: string }).status === "done",
      20000,
    );
    progress.push(...(socket.received("polling.sweep.progress") as typeof progress));
    detail = await waitDone(id);
    console.log(`sweep of 6 addresses × 3 credentials took ${Date.now() - started} ms`);
  });

  it("probes every host address of the range and records the two agents", () => {
    expect(detail).toMatchObject({
      id,
      cidr: "127.0.0.0/29",
      port,
      pool: null,
      status: "done",
      total: 6,
      probed: 6,
      found: 2,
      error: null,
      credential_ids: [ids.wrong, ids.v2c, ids.v3],
      timeout_ms: 400,
      started_at: expect.stringMatching(/Z$/),
      finished_at: expect.stringMatching(/Z$/),
    });
    expect(typeof detail.created_by).toBe("string");
  });

  it("records what each device said, the first credential in the list's order that works, and the classifier's proposal", () => {
    expect(detail.results).toEqual([
      {
        address: "127.0.0.2",
        sys_name: "sweep-agent-2",
        sys_object_id: expect.stringMatching(/^1\.3\.6\.1\.4\.1\.8072\./),
        sys_descr: expect.any(String),
        credential_id: ids.v2c, // v2c and v3 both work there: the list puts v2c first
        proposed_profile_id: ids.profile,
        vendor: "Net-SNMP",
        model: "Linux agent",
        found_at: expect.stringMatching(/Z$/),
      },
      expect.objectContaining({ address: "127.0.0.5", sys_name: "sweep-agent-5", credential_id: ids.v3, proposed_profile_id: ids.profile }),
    ]);
  });

  it("offers the results as a discovery import body that /discovery/import takes", async () => {
    const body = detail.import_body as { nodes: Record<string, unknown>[] };
    expect(body.nodes).toEqual([
      {
        name: "sweep-agent-2",
        address: "127.0.0.2",
        credential_id: ids.v2c,
        profile_id: ids.profile,
        vendor: "Net-SNMP",
        model: "Linux agent",
        snmp_port: port,
      },
      {
        name: "sweep-agent-5",
        address: "127.0.0.5",
        credential_id: ids.v3,
        profile_id: ids.profile,
        vendor: "Net-SNMP",
        model: "Linux agent",
        snmp_port: port,
      },
    ]);
    const imported = await k.http.post("/api/v1/discovery/import").set(bearer(tokens.operator)).send(body);
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ created: 2, skipped_existing: 0 });
    // Imported with the port the sweep reached them on.
    const nodes = (await k.http.get("/api/v1/nodes?q=sweep-agent").set(bearer(tokens.operator))).body as { snmp_port: number }[];
    expect(nodes.map((n) => n.snmp_port)).toEqual([port, port]);
  });

  it("streamed its progress on polling.sweeps, ending with the final counts", () => {
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[progress.length - 1]).toMatchObject({ status: "done", total: 6, probed: 6, found: 2 });
  });

  it("is listed newest first, with keyset pagination", async () => {
    const second = await post("/api/v1/discovery/sweeps", sweepBody({ cidr: "127.0.0.8/30" }), tokens.operator);
    await waitDone(second);
    const first = await k.http.get("/api/v1/discovery/sweeps?limit=1").set(bearer(tokens.operator));
    expect(first.status).toBe(200);
    expect(first.body.map((s: { id: string }) => s.id)).toEqual([second]);
    expect(first.body[0]).not.toHaveProperty("results");
    const cursor = first.headers["x-next-cursor"];
    expect(cursor).toEqual(expect.any(String));
    const next = await k.http.get(`/api/v1/discovery/sweeps?limit=1&cursor=${cursor}`).set(bearer(tokens.operator));
    expect(next.body.map((s: { id: string }) => s.id)).toEqual([id]);
    expect(next.headers["x-next-cursor"]).toBeUndefined();
    expectError(await k.http.get("/api/v1/discovery/sweeps?cursor=garbage").set(bearer(tokens.operator)), 400, "invalid_cursor");
  });
});

describe("POST /discovery/sweeps refuses", () => {
  const create = (body: object, token = tokens.operator) => k.http.post("/api/v1/discovery/sweeps").set(bearer(token)).send(body);

  it.each([
    ["a pool with bad characters", { pool: "eu west" }, "invalid_pool"],
    ["a pool of 64 characters", { pool: "p".repeat(64) }, "invalid_pool"],
    ["an empty pool", { pool: "" }, "invalid_pool"],
    ["not a range", { cidr: "127.0.0.0/33" }, "invalid_cidr"],
    ["a name", { cidr: "localhost/32" }, "invalid_cidr"],
    ["more addresses than sweepSize (64 here)", { cidr: "10.0.0.0/25" }, "too_many_addresses"],
    ["an IPv6 range above sweepSize", { cidr: "2001:db8::/64" }, "too_many_addresses"],
    ["a credential that does not exist", { credential_ids: [MISSING] }, "unknown_reference"],
    ["a credential that is not SNMP", { credential_ids: [() => ids.http] }, "invalid_credential"],
    ["no credential", { credential_ids: [] }, "validation_failed"],
    ["nine credentials", { credential_ids: Array.from({ length: 9 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`) }, "validation_failed"],
    ["a credential id that is not a uuid", { credential_ids: ["nope"] }, "validation_failed"],
    ["an unknown field", { extra: 1 }, "validation_failed"],
    ["port 0", { port: 0 }, "validation_failed"],
    ["a timeout above 10 s", { timeout_ms: 20000 }, "validation_failed"],
  ])("%s", async (_label, over, code) => {
    const resolved = Object.fromEntries(
      Object.entries(over).map(([key, v]) => [key, Array.isArray(v) ? v.map((x) => (typeof x === "function" ? x() : x)) : v]),
    );
    expectError(await create(sweepBody(resolved)), 400, code);
  });

  it("a range written with host bits set sweeps the network that holds it (docs/adr/0007)", async () => {
    const res = await create(sweepBody({ cidr: "127.0.1.77/29", credential_ids: [ids.wrong], timeout_ms: 100 }));
    expect(res.status).toBe(201);
    expect((await waitDone(res.body.id)) as Record<string, unknown>).toMatchObject({ cidr: "127.0.1.72/29", total: 6, probed: 6, status: "done" });
  });

  it("a range of exactly sweepSize addresses is accepted", async () => {
    const res = await create(sweepBody({ cidr: "127.0.1.0/26", credential_ids: [ids.wrong], timeout_ms: 100 }));
    expect(res.status).toBe(201);
    expect((await waitDone(res.body.id)) as Record<string, unknown>).toMatchObject({ total: 62, probed: 62, found: 0, status: "done" });
  });

  it("403 for a viewer and for a folder-scoped operator; 401 without a token", async () => {
    expectError(await create(sweepBody(), tokens.viewer), 403, "permission_denied");
    expectError(await create(sweepBody(), tokens.scoped), 403, "scope_unsupported");
    expectError(await k.http.get("/api/v1/discovery/sweeps").set(bearer(tokens.scoped)), 403, "scope_unsupported");
    expect((await k.http.post("/api/v1/discovery/sweeps").send(sweepBody())).status).toBe(401);
  });

  it("404 for an unknown sweep", async () => {
    expectError(await k.http.get(`/api/v1/discovery/sweeps/${MISSING}`).set(bearer(tokens.operator)), 404, "not_found");
  });
});

describe("a sweep cut off by a restart", () => {
  it("shows as failed once it has made no progress for ten minutes", async () => {
    const [{ id }] = await rawQuery<{ id: string }>(
      k.databaseUrl!,
      `INSERT INTO polling.sweeps (cidr, credential_ids, timeout_ms, status, total, started_at, updated_at)
       VALUES ('192.0.2.0/30', ARRAY[$1::uuid], 1000, 'running', 2, now() - interval '1 hour', now() - interval '11 minutes') RETURNING id`,
      [ids.v2c],
    );
    const res = await k.http.get(`/api/v1/discovery/sweeps/${id}`).set(bearer(tokens.operator));
    expect(res.body).toMatchObject({ status: "failed", error: expect.stringMatching(/^interrupted/), results: [], import_body: { nodes: [] } });
  });
});

describe("parseSweepRange", () => {
  it.each([
    ["10.0.0.0/24", "10.0.0.0/24", 254n],
    ["10.0.0.0/30", "10.0.0.0/30", 2n],
    ["10.0.0.0/31", "10.0.0.0/31", 2n],
    ["10.0.0.7/32", "10.0.0.7/32", 1n],
    ["10.0.0.7", "10.0.0.7/32", 1n],
    ["2001:db8::/126", "2001:db8::/126", 4n],
    ["::ffff:192.0.2.0/124", "::ffff:c000:200/124", 16n],
    // host bits set: the network that holds the address (docs/adr/0007)
    ["10.0.0.1/24", "10.0.0.0/24", 254n],
    ["2001:db8::1/126", "2001:db8::/126", 4n],
  ])("%s", (text, cidr, count) => {
    expect(parseSweepRange(text)).toMatchObject({ cidr, count });
  });

  it.each(["10.0.0.0/33", "010.0.0.0/8", "10.0.0/24", "fe80::1%eth0/128", "10.0.0.0/24/1", "10.0.0.0/x", "localhost/32", "::/129"])("refuses %s", (text) => {
    expect(parseSweepRange(text)).toBeNull();
  });
});
