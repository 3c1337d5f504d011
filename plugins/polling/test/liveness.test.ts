import { createServer, type Server } from "node:net";
import { freeUdpPort, startSnmpd, stopAllSnmpAgents, type SnmpdAgent } from "../../../test/support/snmpAgents.js";
import { detectIcmp, Liveness } from "../checks/Liveness.js";
import type { PollTarget, SnmpCredential } from "../poller/types.js";

// A real Net-SNMP agent on 127.0.0.1 (test/support/snmpAgents.ts).
const V2C: SnmpCredential = { version: "2c", community: "livepublic" };
const V3_USER = { user: "liveuser", auth: "SHA", authKey: "liveauthpass", priv: "AES", privKey: "liveprivpass" };
const V3: SnmpCredential = {
  version: "3",
  user: V3_USER.user,
  security_level: "authPriv",
  auth_protocol: "SHA",
  auth_key: V3_USER.authKey,
  priv_protocol: "AES",
  priv_key: V3_USER.privKey,
};

function target(over: Partial<PollTarget> = {}): PollTarget {
  return {
    node_id: "00000000-0000-4000-8000-000000000001",
    name: "probe",
    address: "127.0.0.1",
    snmp_port: 161,
    pool: "default",
    interval_secs: 60,
    snmp: null,
    templates: [],
    url_check: null,
    dns_check: null,
    ...over,
  };
}

let agent: SnmpdAgent;
let tcp: Server;
let tcpPort: number;
let closedPort: number;

beforeAll(async () => {
  agent = await startSnmpd({
    community: "livepublic",
    users: [V3_USER],
    sysName: "liveness-agent",
  });
  tcp = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", () => resolve()));
  tcpPort = (tcp.address() as { port: number }).port;
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", () => resolve()));
  closedPort = (gone.address() as { port: number }).port;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
});
afterAll(async () => {
  await stopAllSnmpAgents();
  await new Promise<void>((resolve) => (tcp ? tcp.close(() => resolve()) : resolve()));
});

describe("ICMP", () => {
  it("a missing ping binary is detected once, with the reason", async () => {
    const cap = await detectIcmp("/nonexistent/ping");
    expect(cap).toEqual({ available: false, binary: "/nonexistent/ping", reason: "no /nonexistent/ping binary" });
    const live = await Liveness.create({ timeoutMs: 500, pingBinary: "/nonexistent/ping", tcpPorts: [tcpPort] });
    expect(live.icmp.available).toBe(false);
    expect(await live.check(target())).toMatchObject({ reachable: true, method: "tcp" });
  });

  it("127.0.0.1 answers ping when this process may send ICMP (iputils-ping installed); else the reason is known", async () => {
    const cap = await detectIcmp();
    if (!cap.available) {
      // Without the binary or the permission the check falls back to SNMP and TCP (tested below).
      expect(cap.reason).toEqual(expect.any(String));
      return;
    }
    const live = await Liveness.create({ timeoutMs: 1000, tcpPorts: [] });
    const r = await live.check(target());
    expect(r).toMatchObject({ reachable: true, method: "icmp" });
    expect(r.rtt_ms).toEqual(expect.any(Number));
  });
});

describe("SNMP", () => {
  let live: Liveness;
  beforeAll(async () => {
    live = await Liveness.create({ timeoutMs: 500, icmp: "off", tcpPorts: [] });
  });

  it("v2c: the agent answering sysUpTime makes the node reachable", async () => {
    const r = await live.check(target({ snmp: V2C, snmp_port: agent.port }));
    expect(r).toMatchObject({ reachable: true, method: "snmp" });
    expect(r.rtt_ms).toBeGreaterThanOrEqual(0);
  });

  it("v3 authPriv", async () => {
    expect(await live.check(target({ snmp: V3, snmp_port: agent.port }))).toMatchObject({ reachable: true, method: "snmp" });
  });

  it("a wrong community gets no answer: unreachable (SNMP named), within the timeout", async () => {
    const started = Date.now();
    const r = await live.check(target({ snmp: { version: "2c", community: "wrong" }, snmp_port: agent.port }));
    expect(r).toEqual({ reachable: false, method: "snmp", rtt_ms: null });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("no agent on the port: unreachable", async () => {
    expect(await live.check(target({ snmp: V2C, snmp_port: await freeUdpPort() }))).toMatchObject({ reachable: false });
  });
});

describe("TCP", () => {
  it("an accepted connection answers", async () => {
    const live = await Liveness.create({ timeoutMs: 500, icmp: "off", tcpPorts: [tcpPort] });
    const r = await live.check(target());
    expect(r).toMatchObject({ reachable: true, method: "tcp" });
  });

  it("a refused connection also answers (only a live host sends the reset)", async () => {
    const live = await Liveness.create({ timeoutMs: 500, icmp: "off", tcpPorts: [closedPort] });
    expect(await live.check(target())).toMatchObject({ reachable: true, method: "tcp" });
  });

  it("the default ports (22, 80, 443) on loopback answer, by accept or refusal", async () => {
    const live = await Liveness.create({ timeoutMs: 500, icmp: "off" });
    expect(await live.check(target({ address: "127.0.0.9" }))).toMatchObject({ reachable: true, method: "tcp" });
  });

  it("SNMP and TCP side by side: a node whose agent is silent is still reachable by TCP", async () => {
    const live = await Liveness.create({ timeoutMs: 500, icmp: "off", tcpPorts: [closedPort] });
    expect(await live.check(target({ snmp: { version: "2c", community: "wrong" }, snmp_port: agent.port }))).toMatchObject({
      reachable: true,
      method: "tcp",
    });
  });
});

describe("nothing to try", () => {
  it("no ICMP, no SNMP, no TCP port: unreachable", async () => {
    const live = await Liveness.create({ timeoutMs: 300, icmp: "off", tcpPorts: [] });
    expect(await live.check(target())).toEqual({ reachable: false, method: "tcp", rtt_ms: null });
  });

  it("an address that is not an IP is unreachable without a probe", async () => {
    const live = await Liveness.create({ timeoutMs: 300, icmp: "off", tcpPorts: [tcpPort] });
    expect(await live.check(target({ address: "-c 99 127.0.0.1" }))).toEqual({ reachable: false, method: "tcp", rtt_ms: null });
  });
});
