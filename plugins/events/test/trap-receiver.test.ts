/**
 * The SNMP trap listener against Net-SNMP's snmptrap and snmpinform on loopback: v1 (generic and
 * enterprise-specific, mapped per RFC 3584), v2c traps and informs (acknowledged), v3 authPriv,
 * refused communities and users, and the bound on the v3 localized-key cache.
 */
import { createSocket } from "node:dgram";
import type { Inbound } from "../lib/types.js";
import { startTrapListener, type TrapListener, type TrapListenerOptions } from "../traps/receiver.js";
import { netSnmpGlobalKeyCount } from "../traps/usmKeys.js";
import { ber, LOOPBACK, removeSenderState, sendDatagrams, snmpinform, snmptrap } from "../../../test/support/trapSenders.js";

const USER = { name: "trapuser", level: "authPriv", authProtocol: "sha", authKey: "trapauthpass", privProtocol: "aes", privKey: "trapprivpass" } as const;
/** snmptrap arguments of a v3 authPriv (SHA/AES) linkDown trap from engine 0x8000000001020304. */
const v3AuthPriv = (o: { user: string; auth: string; priv: string }, target: string) => [
  "-v3",
  "-e",
  "0x8000000001020304",
  "-u",
  o.user,
  "-l",
  "authPriv",
  "-a",
  "SHA",
  "-A",
  o.auth,
  "-x",
  "AES",
  "-X",
  o.priv,
  target,
  "",
  LINK_DOWN,
];
const V3_ARGS = ["-v3", "-u", "trapuser", "-l", "authPriv", "-a", "SHA", "-A", "trapauthpass", "-x", "AES", "-X", "trapprivpass"];
const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
const IF_INDEX_2 = "1.3.6.1.2.1.2.2.1.1.2";

const listeners: TrapListener[] = [];
afterAll(async () => {
  await Promise.all(listeners.map((l) => l.close()));
  removeSenderState();
});

/** A listener on a free loopback port collecting what it delivers. */
async function listen(over: Partial<TrapListenerOptions> = {}): Promise<{ l: TrapListener; got: Inbound[]; target: string }> {
  const got: Inbound[] = [];
  const l = await startTrapListener({ host: LOOPBACK, port: 0, communities: ["public"], users: [USER], onMessage: (m) => got.push(m), ...over });
  listeners.push(l);
  return { l, got, target: `${LOOPBACK}:${l.port}` };
}

/** Waits until the listener has read `n` datagrams and handled them. */
async function settled(l: TrapListener, n: number, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (l.counters.received < n) {
    if (Date.now() > deadline) throw new Error(`listener read ${l.counters.received} of ${n} datagrams`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("trap listener with Net-SNMP senders", () => {
  test("binds a free port and reports it", async () => {
    const { l } = await listen();
    expect(l).toMatchObject({ name: "traps.udp", stream: "trap", protocol: "udp", address: LOOPBACK });
    expect(l.port).toBeGreaterThan(0);
    expect(l.counters).toEqual({ received: 0, dropped: 0, malformed: 0 });
  });

  test("v2c trap: sysUpTime and snmpTrapOID are taken out of the varbinds", async () => {
    const { l, got, target } = await listen();
    await snmptrap(["-v2c", "-c", "public", target, "12345", LINK_DOWN, IF_INDEX_2, "i", "2", "1.3.6.1.2.1.2.2.1.2.2", "s", "eth1 uplink"]);
    await settled(l, 1);
    expect(got).toHaveLength(1);
    const m = got[0];
    expect(m).toMatchObject({ kind: "trap", transport: "udp", listener: "traps.udp", source_ip: LOOPBACK, malformed: false, raw: null, syslog: null });
    expect(m.trap).toEqual({
      version: "v2c",
      pdu: "trap",
      community: "public",
      user: null,
      trap_oid: LINK_DOWN,
      uptime: 12345,
      v1: null,
      varbinds: [
        { oid: IF_INDEX_2, type: "Integer", value: 2 },
        { oid: "1.3.6.1.2.1.2.2.1.2.2", type: "OctetString", value: "eth1 uplink" },
      ],
    });
    expect(l.counters).toEqual({ received: 1, dropped: 0, malformed: 0 });
  });

  test("varbind types are named and given as text-friendly values", async () => {
    const { l, got, target } = await listen();
    await snmptrap([
      "-v2c",
      "-c",
      "public",
      target,
      "",
      "1.3.6.1.4.1.8072.2.3.0.1",
      "1.3.6.1.4.1.8072.2.3.2.1",
      "c",
      "4294967295",
      "1.3.6.1.4.1.8072.2.3.2.2",
      "C",
      "18446744073709551615",
      "1.3.6.1.4.1.8072.2.3.2.3",
      "u",
      "42",
      "1.3.6.1.4.1.8072.2.3.2.4",
      "t",
      "360000",
      "1.3.6.1.4.1.8072.2.3.2.5",
      "a",
      "192.0.2.7",
      "1.3.6.1.4.1.8072.2.3.2.6",
      "o",
      "1.3.6.1.4.1.8072",
      "1.3.6.1.4.1.8072.2.3.2.7",
      "x",
      "00FF10",
      "1.3.6.1.4.1.8072.2.3.2.8",
      "s",
      "grüße",
      "1.3.6.1.4.1.8072.2.3.2.9",
      "x",
      "6869006869",
      "1.3.6.1.4.1.8072.2.3.2.10",
      "i",
      "-7",
    ]);
    await settled(l, 1);
    const vbs = got[0].trap!.varbinds;
    expect(got[0].trap!.uptime).toEqual(expect.any(Number)); // '' = the sender's own uptime
    expect(vbs.map((v) => [v.type, v.value])).toEqual([
      ["Counter32", 4294967295],
      ["Counter64", "18446744073709551615"],
      ["Gauge32", 42],
      ["TimeTicks", 360000],
      ["IpAddress", "192.0.2.7"],
      ["OID", "1.3.6.1.4.1.8072"],
      ["OctetString", "0x00ff10"],
      ["OctetString", "grüße"],
      ["OctetString", "0x6869006869"],
      ["Integer", -7],
    ]);
  });

  test("v1 generic trap is mapped per RFC 3584 §3.1 without the community in the varbinds", async () => {
    const { l, got, target } = await listen();
    await snmptrap(["-v1", "-c", "public", target, "1.3.6.1.4.1.8072.2.3", "192.0.2.1", "2", "0", "777", IF_INDEX_2, "i", "2"]);
    await settled(l, 1);
    const t = got[0].trap!;
    expect(t).toEqual({
      version: "v1",
      pdu: "trap",
      community: "public",
      user: null,
      trap_oid: LINK_DOWN,
      uptime: 777,
      v1: { agent_addr: "192.0.2.1", enterprise: "1.3.6.1.4.1.8072.2.3", generic: 2, specific: 0 },
      varbinds: [
        { oid: IF_INDEX_2, type: "Integer", value: 2 },
        { oid: "1.3.6.1.6.3.18.1.3.0", type: "IpAddress", value: "192.0.2.1" },
        { oid: "1.3.6.1.6.3.1.1.4.3.0", type: "OID", value: "1.3.6.1.4.1.8072.2.3" },
      ],
    });
    expect(JSON.stringify(t.varbinds)).not.toContain("public");
    expect(t.varbinds.some((v) => v.oid.startsWith("1.3.6.1.6.3.18.1.4"))).toBe(false); // snmpTrapCommunity
  });

  test("v1 enterprise-specific trap maps to enterprise.0.specific", async () => {
    const { l, got, target } = await listen();
    await snmptrap(["-v1", "-c", "public", target, "1.3.6.1.4.1.9.9.41.2", LOOPBACK, "6", "17", "", "1.3.6.1.4.1.9.9.41.1.2.3.1.2.1", "s", "LINK"]);
    await settled(l, 1);
    const t = got[0].trap!;
    expect(t.trap_oid).toBe("1.3.6.1.4.1.9.9.41.2.0.17");
    expect(t.v1).toEqual({ agent_addr: LOOPBACK, enterprise: "1.3.6.1.4.1.9.9.41.2", generic: 6, specific: 17 });
    expect(t.varbinds[0]).toEqual({ oid: "1.3.6.1.4.1.9.9.41.1.2.3.1.2.1", type: "OctetString", value: "LINK" });
  });

  test("v2c inform is acknowledged (snmpinform exits 0) and delivered as an inform", async () => {
    const { l, got, target } = await listen();
    const r = await snmpinform(["-v2c", "-c", "public", "-r1", "-t2", target, "", LINK_DOWN, IF_INDEX_2, "i", "3"]);
    expect(r).toMatchObject({ code: 0 });
    await settled(l, 1);
    expect(got[0].trap).toMatchObject({ version: "v2c", pdu: "inform", trap_oid: LINK_DOWN, varbinds: [{ oid: IF_INDEX_2, type: "Integer", value: 3 }] });
  });

  test("v3 authPriv SHA/AES trap decodes with the user name", async () => {
    const { l, got, target } = await listen();
    await snmptrap([...V3_ARGS, "-e", "0x8000000001020304", target, "", LINK_DOWN, IF_INDEX_2, "i", "2"]);
    await settled(l, 1);
    expect(got[0].trap).toMatchObject({ version: "v3", pdu: "trap", community: null, user: "trapuser", trap_oid: LINK_DOWN });
    expect(got[0].trap!.varbinds).toEqual([{ oid: IF_INDEX_2, type: "Integer", value: 2 }]);
    expect(l.counters).toEqual({ received: 1, dropped: 0, malformed: 0 });
  });

  test("v3 authPriv inform is acknowledged after engine discovery", async () => {
    const { l, got, target } = await listen();
    const r = await snmpinform([...V3_ARGS, "-r1", "-t2", target, "", LINK_DOWN, IF_INDEX_2, "i", "5"]);
    expect(r).toMatchObject({ code: 0 });
    await settled(l, 2); // the discovery probe, then the inform
    expect(l.discoveryProbes()).toBe(1);
    expect(got).toHaveLength(1);
    expect(got[0].trap).toMatchObject({ version: "v3", pdu: "inform", user: "trapuser", trap_oid: LINK_DOWN });
    expect(l.counters.dropped + l.counters.malformed).toBe(0);
  });

  test("a v3 inform to a configured engine ID needs no discovery", async () => {
    const { l, got, target } = await listen({ engineId: "0x80001f8880aabbccdd" });
    const r = await snmpinform([...V3_ARGS, "-e", "0x80001f8880aabbccdd", "-r1", "-t2", target, "", LINK_DOWN]);
    expect(r).toMatchObject({ code: 0 });
    await settled(l, 1);
    expect(got[0].trap).toMatchObject({ version: "v3", pdu: "inform", user: "trapuser" });
    expect(l.counters).toEqual({ received: 1, dropped: 0, malformed: 0 });
    await expect(listen({ engineId: "zz" })).rejects.toThrow(/engineId/);
  });

  test("a consumer that refuses (queue full) or throws loses the record, counted as dropped; the listener carries on", async () => {
    let calls = 0;
    const { l, target } = await listen({
      onMessage: () => {
        calls++;
        if (calls === 1) return false;
        throw new Error("boom");
      },
    });
    await snmptrap(["-v2c", "-c", "public", target, "", LINK_DOWN]);
    await snmptrap(["-v2c", "-c", "public", target, "", LINK_DOWN]);
    await sendDatagrams(l.port, [Buffer.from("not snmp")]);
    await settled(l, 3);
    expect(calls).toBe(3);
    expect(l.counters).toEqual({ received: 3, dropped: 2, malformed: 1 });
  });

  test("other v3 security settings: authNoPriv SHA-256, authPriv MD5/AES-256 and SHA-512/AES-192", async () => {
    const users: TrapListenerOptions["users"] = [
      { name: "sha256user", level: "authNoPriv", authProtocol: "sha256", authKey: "sha256authpass" },
      { name: "md5user", level: "authPriv", authProtocol: "md5", authKey: "md5authpass", privProtocol: "aes256", privKey: "aes256privpass" },
      { name: "sha512user", level: "authPriv", authProtocol: "sha512", authKey: "sha512authpass", privProtocol: "aes192", privKey: "aes192privpass" },
    ];
    const { l, got, target } = await listen({ users });
    const common = ["-e", "0x8000000001020305", target, "", LINK_DOWN];
    await snmptrap(["-v3", "-u", "sha256user", "-l", "authNoPriv", "-a", "SHA-256", "-A", "sha256authpass", ...common]);
    await snmptrap(["-v3", "-u", "md5user", "-l", "authPriv", "-a", "MD5", "-A", "md5authpass", "-x", "AES-256", "-X", "aes256privpass", ...common]);
    await snmptrap(["-v3", "-u", "sha512user", "-l", "authPriv", "-a", "SHA-512", "-A", "sha512authpass", "-x", "AES-192", "-X", "aes192privpass", ...common]);
    await settled(l, 3);
    expect(l.counters).toEqual({ received: 3, dropped: 0, malformed: 0 });
    expect(got.map((m) => m.trap!.user)).toEqual(["sha256user", "md5user", "sha512user"]);
  });

  test("a DES user is refused at start when the runtime has no DES (else its traps decode)", async () => {
    const des: TrapListenerOptions["users"] = [
      { name: "desuser", level: "authPriv", authProtocol: "md5", authKey: "md5authpass", privProtocol: "des", privKey: "desprivpass" },
    ];
    let started: Awaited<ReturnType<typeof listen>>;
    try {
      started = await listen({ users: des });
    } catch (err) {
      expect(String(err)).toMatch(/DES privacy is not available/);
      return;
    }
    const { l, got, target } = started;
    await snmptrap([
      "-v3",
      "-e",
      "0x8000000001020306",
      "-u",
      "desuser",
      "-l",
      "authPriv",
      "-a",
      "MD5",
      "-A",
      "md5authpass",
      "-x",
      "DES",
      "-X",
      "desprivpass",
      target,
      "",
      LINK_DOWN,
    ]);
    await settled(l, 1);
    expect(got[0].trap!.user).toBe("desuser");
  });

  test("wrong community, unknown v3 user and wrong v3 keys are dropped, never delivered", async () => {
    const { l, got, target } = await listen();
    await snmptrap(["-v2c", "-c", "private", target, "", LINK_DOWN]);
    await snmptrap(["-v1", "-c", "secret", target, "1.3.6.1.4.1.8072.2.3", LOOPBACK, "2", "0", ""]);
    await snmptrap(v3AuthPriv({ user: "nobody", auth: "trapauthpass", priv: "trapprivpass" }, target));
    await snmptrap(v3AuthPriv({ user: "trapuser", auth: "wrongauthpass", priv: "trapprivpass" }, target));
    await snmptrap(v3AuthPriv({ user: "trapuser", auth: "trapauthpass", priv: "wrongprivpass" }, target));
    // A noAuthNoPriv v3 trap with an empty user name (net-snmp itself would accept it; snmptrap cannot send one).
    await sendDatagrams(l.port, [ber.v3NoAuth(Buffer.from("8000000001020399", "hex"), "", [["1.3.6.1.6.3.1.1.4.1.0", ber.oid(LINK_DOWN)]])]);
    // An unknown user's inform is answered with a USM report (no callback from net-snmp): counted as dropped too.
    const inform = await snmpinform(["-v3", "-u", "nobody", "-l", "authNoPriv", "-a", "SHA", "-A", "trapauthpass", "-r0", "-t1", target, "", LINK_DOWN]);
    expect(inform.code).not.toBe(0);
    await settled(l, 8); // 6 traps, the inform's discovery probe and the inform
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual([]);
    expect(l.counters).toEqual({ received: 8, dropped: 7, malformed: 0 });
    expect(l.discoveryProbes()).toBe(1);
  });

  test("the crafted empty-user v3 trap decodes when a user of that name exists (the encoder is sound)", async () => {
    const { l, got } = await listen({ users: [{ name: "nms", level: "noAuthNoPriv" }] });
    await sendDatagrams(l.port, [ber.v3NoAuth(Buffer.from("8000000001020399", "hex"), "nms", [["1.3.6.1.6.3.1.1.4.1.0", ber.oid(LINK_DOWN)]])]);
    await settled(l, 1);
    expect(got[0].trap).toMatchObject({ version: "v3", user: "nms", trap_oid: LINK_DOWN, varbinds: [] });
  });

  test("an empty community list accepts no v1/v2c trap", async () => {
    const { l, got, target } = await listen({ communities: [] });
    await snmptrap(["-v2c", "-c", "public", target, "", LINK_DOWN]);
    await settled(l, 1);
    expect(got).toEqual([]);
    expect(l.counters).toEqual({ received: 1, dropped: 1, malformed: 0 });
  });

  test("a dual-stack listener reports v4-mapped senders as IPv4", async () => {
    const probe = createSocket("udp6");
    const v6 = await new Promise<boolean>((resolve) => {
      probe.once("error", () => resolve(false));
      probe.bind(0, "::", () => resolve(true));
    });
    probe.close();
    if (!v6) return; // no IPv6 in this sandbox
    const { l, got } = await listen({ host: "::" });
    await snmptrap(["-v2c", "-c", "public", `udp:${LOOPBACK}:${l.port}`, "", LINK_DOWN]);
    await settled(l, 1);
    expect(got[0].source_ip).toBe(LOOPBACK);
  });

  test("the v3 localized-key cache stays bounded across many sender engine IDs, and traps still decode", async () => {
    const before = netSnmpGlobalKeyCount();
    const { l, got, target } = await listen({ engineIdCacheSize: 4 });
    const engines = Array.from({ length: 12 }, (_, i) => `0x80000000010203${(0x10 + i).toString(16)}`);
    for (const e of engines) {
      await snmptrap([...V3_ARGS, "-e", e, target, "", LINK_DOWN, IF_INDEX_2, "i", "2"]);
      expect(l.engineCacheSize()).toBeLessThanOrEqual(4);
    }
    // An engine seen long ago (evicted) still decodes: its keys are localized again.
    await snmptrap([...V3_ARGS, "-e", engines[0], target, "", LINK_DOWN]);
    await settled(l, engines.length + 1);
    expect(got).toHaveLength(engines.length + 1);
    expect(got.every((m) => m.trap?.user === "trapuser" && m.trap.trap_oid === LINK_DOWN)).toBe(true);
    expect(l.engineCacheSize()).toBe(4);
    expect(netSnmpGlobalKeyCount()).toBe(before); // net-snmp's own unbounded cache was not used
    expect(l.counters).toEqual({ received: engines.length + 1, dropped: 0, malformed: 0 });
  });

  test("a port in use is refused at start", async () => {
    const { l } = await listen();
    await expect(startTrapListener({ host: LOOPBACK, port: l.port, communities: [], users: [], onMessage: () => undefined })).rejects.toThrow(/EADDRINUSE/);
  });

  test("weak or incomplete v3 users are refused at start", async () => {
    const base = { host: LOOPBACK, port: 0, communities: [], onMessage: () => undefined };
    await expect(startTrapListener({ ...base, users: [{ name: "u", level: "authNoPriv", authKey: "short" }] })).rejects.toThrow(/at least 8/);
    await expect(startTrapListener({ ...base, users: [{ name: "u", level: "authPriv", authKey: "longenough" }] })).rejects.toThrow(/priv key/);
  });
});
