/**
 * The operator console's polling routes against a real agent (snmpsim) and the embedded poller: POST /snmp/probe
 * (a live agent, a silent address, a community the agent does not serve, v3 with a wrong key; never a secret in the
 * answer), GET /agent-health and /nodes/{id}/agent-health (an answering and a silent agent), GET /interfaces?q=; with
 * their permissions (no token, bad token, viewer, operator, folder-scoped) and their 400s and 404s.
 */
import { expectError } from "../../../test/support/assertions.js";
import { freeUdpPort, startSnmpsim, stopAllSnmpAgents, type SnmpsimAgent } from "../../../test/support/snmpAgents.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { until } from "../../../test/support/wait.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../index.js";

const INTERVAL_SECS = 5;
const MISSING = "00000000-0000-4000-8000-000000000000";
const COMMUNITY = "console-secret-community";

let k: TestKernel;
let agent: SnmpsimAgent;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};

async function created(path: string, body: object): Promise<string> {
  const res = await k.request("POST", path, { body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { id: string }).id;
}

const as = (token: string | null) => ({ token });

beforeAll(async () => {
  agent = await startSnmpsim({
    devices: [
      {
        community: COMMUNITY,
        sysName: "console-agent",
        sysObjectId: "1.3.6.1.4.1.8072.3.2.10",
        interfaces: [
          { name: "uplink-eth0", inBytesPerSec: 1000, outBytesPerSec: 1000, speedMbps: 100 },
          { name: "lan-eth1", inBytesPerSec: 1000, outBytesPerSec: 1000, speedMbps: 100 },
        ],
      },
    ],
  });
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin],
    overrides: { pluginConfig: { polling: { embeddedPoller: true, defaultIntervalSecs: INTERVAL_SECS, snmpTimeoutMs: 300, snmpRetries: 0 } } },
  });
  ids.folderA = await created("/node-groups", { name: "Console A" });
  ids.folderB = await created("/node-groups", { name: "Console B" });
  ids.cred = await created("/credentials", { name: "served", kind: "snmp_v2c", community: COMMUNITY });
  ids.wrong = await created("/credentials", { name: "not served", kind: "snmp_v2c", community: "not-served-here" });
  ids.v3 = await created("/credentials", {
    name: "v3 wrong key",
    kind: "snmp_v3",
    user: agent.v3.user,
    security_level: "authPriv",
    auth_protocol: "SHA",
    auth_key: "wrong-auth-key-123",
    priv_protocol: "AES",
    priv_key: agent.v3.privKey,
  });
  ids.http = await created("/credentials", { name: "web", kind: "http", mode: "bearer", token: "tok-abcdef" });
  ids.profile = await created("/profiles", { name: "Net-SNMP agents" });
  await created("/classification-rules", { profile_id: ids.profile, sysobjectid_prefix: "1.3.6.1.4.1.8072", vendor: "net-snmp", model: "agent" });
  ids.answering = await created("/nodes", {
    name: "console-answering",
    address: agent.host,
    snmp_port: agent.port,
    credential_id: ids.cred,
    group_id: ids.folderA,
  });
  ids.silent = await created("/nodes", { name: "console-silent", address: agent.host, snmp_port: agent.port, credential_id: ids.wrong, group_id: ids.folderB });
  tokens.viewer = await k.token("viewer");
  tokens.operator = await k.token("operator");
  tokens.scopedOp = await k.token("operator", { folders: [ids.folderA] });
  tokens.scopedViewer = await k.token("viewer", { folders: [ids.folderA] });
}, 90_000);

afterAll(async () => {
  await k?.stop();
  await stopAllSnmpAgents();
});

describe("POST /snmp/probe", () => {
  const probe = (body: object, token: string | null = tokens.operator) => k.request("POST", "/snmp/probe", { body, token });

  it("answers what a live agent said and the profile it would get, without the secret", async () => {
    const res = await probe({ address: agent.host, port: agent.port, credential_id: ids.cred });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      answered: true,
      outcome: "ok",
      sys_name: "console-agent",
      sys_object_id: "1.3.6.1.4.1.8072.3.2.10",
      profile_id: ids.profile,
      profile_name: "Net-SNMP agents",
      vendor: "net-snmp",
      model: "agent",
    });
    expect(typeof (res.body as { sys_descr: unknown }).sys_descr).toBe("string");
    expect(JSON.stringify(res.body)).not.toContain(COMMUNITY);
  });

  it("a silent address and an unserved community time out within the bound; a wrong v3 key is auth", async () => {
    const silentPort = await freeUdpPort();
    const started = Date.now();
    const silent = await probe({ address: "127.0.0.1", port: silentPort, credential_id: ids.cred, timeout_ms: 400 });
    expect(silent.status).toBe(200);
    expect(silent.body).toMatchObject({ answered: false, outcome: "timeout", sys_name: null, profile_id: null });
    expect(Date.now() - started).toBeLessThan(3000);
    const wrong = await probe({ address: agent.host, port: agent.port, credential_id: ids.wrong, timeout_ms: 400 });
    expect(wrong.body).toMatchObject({ answered: false, outcome: "timeout" });
    expect(JSON.stringify(wrong.body)).not.toContain("not-served-here");
    const v3 = await probe({ address: agent.host, port: agent.port, credential_id: ids.v3, timeout_ms: 1000 });
    expect(v3.status).toBe(200);
    expect((v3.body as { answered: boolean }).answered).toBe(false);
    expect(["auth", "timeout"]).toContain((v3.body as { outcome: string }).outcome);
    expect(JSON.stringify(v3.body)).not.toContain("wrong-auth-key-123");
  });

  it("400 with a stable code for bad input", async () => {
    expectError(await probe({ address: "not-an-ip", credential_id: ids.cred }), 400, "validation_failed");
    expectError(await probe({ address: agent.host }), 400, "validation_failed");
    expectError(await probe({ address: agent.host, credential_id: ids.cred, timeout_ms: 60_000 }), 400, "validation_failed");
    expectError(await probe({ address: agent.host, credential_id: ids.cred, port: 0 }), 400, "validation_failed");
    expectError(await probe({ address: agent.host, credential_id: ids.cred, extra: 1 }), 400, "validation_failed");
    expectError(await probe({ address: agent.host, credential_id: MISSING }), 400, "unknown_reference");
    expectError(await probe({ address: agent.host, credential_id: ids.http }), 400, "invalid_credential");
  });

  it("401 without or with a bad token, 403 for a viewer and a folder-scoped operator; admin and operator may", async () => {
    const body = { address: agent.host, port: agent.port, credential_id: ids.cred };
    expectError(await probe(body, null), 401, "unauthorized");
    expectError(await probe(body, "nms_bad-token"), 401, "unauthorized");
    expectError(await probe(body, tokens.viewer), 403, "permission_denied");
    expectError(await probe(body, tokens.scopedOp), 403, "scope_unsupported");
    expect((await probe(body, k.adminToken)).status).toBe(200);
  });
});

describe("agent health", () => {
  interface Health {
    node_id: string;
    node_name: string;
    reachable: boolean | null;
    agent_status: string | null;
    last_answer_at: string | null;
    data_age_secs: number | null;
  }

  it("shows an answering agent with its last answer and a silent one timing out", async () => {
    const both = await until(
      "both nodes polled",
      async () => {
        const rows = (await k.request("GET", "/agent-health", as(tokens.viewer))).body as Health[];
        const a = rows.find((r) => r.node_id === ids.answering);
        const s = rows.find((r) => r.node_id === ids.silent);
        return a?.agent_status === "answering" && s?.agent_status === "timeout" ? { a, s } : null;
      },
      20_000,
    );
    expect(both.a).toMatchObject({ node_name: "console-answering", reachable: true });
    expect(Date.parse(both.a.last_answer_at!)).toBeGreaterThan(Date.now() - 60_000);
    expect(both.a.data_age_secs).toBeLessThan(60);
    expect(both.s).toMatchObject({ node_name: "console-silent", reachable: true, last_answer_at: null, data_age_secs: null });
    const one = await k.request("GET", `/nodes/${ids.silent}/agent-health`, as(tokens.viewer));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ node_id: ids.silent, agent_status: "timeout" });
    const problems = (await k.request("GET", "/agent-health?problems=true")).body as Health[];
    expect(problems.map((r) => r.node_id)).toEqual([ids.silent]);
  }, 30_000);

  it("pages by node id, and a folder-scoped caller sees its folders' nodes only", async () => {
    const first = await k.request("GET", "/agent-health?limit=1");
    expect((first.body as Health[]).length).toBe(1);
    const cursor = first.headers.get("x-next-cursor")!;
    expect(cursor).toBeTruthy();
    const second = await k.request("GET", `/agent-health?limit=1&cursor=${encodeURIComponent(cursor)}`);
    expect((second.body as Health[]).length).toBe(1);
    expect((second.body as Health[])[0].node_id).not.toBe((first.body as Health[])[0].node_id);
    const scoped = (await k.request("GET", "/agent-health", as(tokens.scopedViewer))).body as Health[];
    expect(scoped.map((r) => r.node_id)).toEqual([ids.answering]);
    expectError(await k.request("GET", `/nodes/${ids.silent}/agent-health`, as(tokens.scopedViewer)), 404, "not_found");
  });

  it("400, 401 and 404 answers", async () => {
    expectError(await k.request("GET", "/agent-health?cursor=garbage"), 400, "invalid_cursor");
    expectError(await k.request("GET", "/agent-health?limit=0"), 400, "validation_failed");
    expectError(await k.request("GET", "/agent-health?problems=maybe"), 400, "validation_failed");
    expectError(await k.request("GET", "/agent-health", as(null)), 401, "unauthorized");
    expectError(await k.request("GET", "/agent-health", as("nms_bad-token")), 401, "unauthorized");
    expectError(await k.request("GET", `/nodes/${MISSING}/agent-health`), 404, "not_found");
    expectError(await k.request("GET", "/nodes/not-a-uuid/agent-health"), 400, "validation_failed");
  });
});

describe("GET /interfaces?q=", () => {
  interface Hit {
    node_id: string;
    node_name: string;
    ifindex: number;
    if_name: string | null;
  }

  it("finds interfaces by name across nodes, in the caller's folders only", async () => {
    const hits = await until(
      "the interfaces polled",
      async () => {
        const rows = (await k.request("GET", "/interfaces?q=UPLINK", as(tokens.viewer))).body as Hit[];
        return rows.length ? rows : null;
      },
      20_000,
    );
    expect(hits).toEqual([
      expect.objectContaining({ node_id: ids.answering, node_name: "console-answering", if_name: "uplink-eth0", node_address: agent.host }),
    ]);
    const all = (await k.request("GET", "/interfaces?q=eth")).body as Hit[];
    // One node: by ifindex.
    expect(all.map((h) => h.if_name)).toEqual(["uplink-eth0", "lan-eth1"]);
    const paged = await k.request("GET", "/interfaces?q=eth&limit=1");
    const next = await k.request("GET", `/interfaces?q=eth&limit=1&cursor=${encodeURIComponent(paged.headers.get("x-next-cursor")!)}`);
    expect([...(paged.body as Hit[]), ...(next.body as Hit[])].map((h) => h.ifindex).sort()).toEqual(all.map((h) => h.ifindex).sort());
    expect(((await k.request("GET", `/interfaces?q=eth&group_id=${ids.folderB}`)).body as Hit[]).length).toBe(0);
    expect(((await k.request("GET", "/interfaces?q=eth", as(tokens.scopedViewer))).body as Hit[]).length).toBe(2);
    expect(((await k.request("GET", "/interfaces?q=100%25")).body as Hit[]).length).toBe(0);
  }, 30_000);

  it("400, 401 and 404 answers", async () => {
    expectError(await k.request("GET", "/interfaces"), 400, "validation_failed");
    expectError(await k.request("GET", "/interfaces?q=%20%20"), 400, "validation_failed");
    expectError(await k.request("GET", "/interfaces?q=eth&cursor=garbage"), 400, "invalid_cursor");
    expectError(await k.request("GET", "/interfaces?q=eth", as(null)), 401, "unauthorized");
    expectError(await k.request("GET", "/interfaces?q=eth", as("nms_bad-token")), 401, "unauthorized");
    expectError(await k.request("GET", `/interfaces?q=eth&group_id=${ids.folderB}`, as(tokens.scopedViewer)), 404, "not_found");
    expectError(await k.request("GET", `/interfaces?q=eth&group_id=${MISSING}`), 404, "not_found");
  });
});
