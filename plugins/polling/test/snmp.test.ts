/**
 * The SNMP engine against real agents on loopback: snmpsim (synthetic devices whose counters grow
 * at known rates, and the real walks shipped with Debian's snmpsim) and Net-SNMP's snmpd.
 */
import { createCipheriv } from "node:crypto";
import { computeRates, counterRate, type CounterState } from "../lib/rates.js";
import type { InterfaceState, PollTarget, SnmpCredential, TemplateItem } from "../poller/types.js";
import { SnmpPoller, type SnmpPollOutcome } from "../snmp/SnmpPoller.js";
import {
  freeUdpPort,
  HR_CPUS,
  HR_STORAGE,
  startSnmpd,
  startSnmpsim,
  stopAllSnmpAgents,
  type SnmpdAgent,
  type SnmpsimAgent,
  type SyntheticInterface,
} from "../../../test/support/snmpAgents.js";

const ENT = "1.3.6.1.4.1.99999";
const SYNTH_IFS: SyntheticInterface[] = [1, 2, 3, 4].map((i) => ({
  name: `GigabitEthernet0/${i}`,
  inBytesPerSec: 125_000 * i, // i Mbit/s
  outBytesPerSec: 62_500 * i,
  speedMbps: i === 1 ? 10_000 : 1_000,
  up: i !== 4,
  inErrorsPerSec: i === 1 ? 5 : 0,
}));
const WRAP_BYTES_PER_SEC = 1_000_000_000; // a 32-bit counter wraps every 4.3 s
const EXACT_HC: [string, string] = ["18446744073709551615", "9007199254740993"];

let sim: SnmpsimAgent;
let snmpd: SnmpdAgent;
const poller = new SnmpPoller({ timeoutMs: 1000, retries: 1 });

const target = (port: number, snmp: SnmpCredential | null, templates: TemplateItem[] = []): PollTarget => ({
  node_id: "00000000-0000-4000-8000-000000000001",
  name: "device",
  address: "127.0.0.1",
  snmp_port: port,
  pool: "default",
  interval_secs: 60,
  snmp,
  templates,
  url_check: null,
  dns_check: null,
});
const v2c = (community: string): SnmpCredential => ({ version: "2c", community });
const simV3 = (over: Partial<SnmpCredential> = {}): SnmpCredential => ({
  version: "3",
  user: "simuser",
  security_level: "authPriv",
  auth_protocol: "SHA",
  auth_key: "simauthpass",
  priv_protocol: "AES",
  priv_key: "simprivpass",
  ...over,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Interface states of a poll, as the loop keeps them between polls. */
function states(r: SnmpPollOutcome): Map<number, InterfaceState> {
  return new Map(r.interfaces.map((i) => [i.ifindex, computeRates(undefined, i, r.facts?.uptime_ticks ?? null, r.at_unix_ms).state]));
}
/** Rates of the second poll against the first, by ifindex and metric. */
function ratesBetween(a: SnmpPollOutcome, b: SnmpPollOutcome): Map<number, Record<string, number>> {
  const before = states(a);
  return new Map(
    b.interfaces.map((i) => [
      i.ifindex,
      Object.fromEntries(computeRates(before.get(i.ifindex), i, b.facts?.uptime_ticks ?? null, b.at_unix_ms).samples.map((s) => [s.metric, s.value])),
    ]),
  );
}

const TEMPLATES: TemplateItem[] = [
  { id: "t1", metric_name: "tpl_gauge", metric_kind: "gauge", collection: "scalar", oid: `${ENT}.1.2.0` },
  { id: "t2", metric_name: "tpl_text_gauge", metric_kind: "gauge", collection: "scalar", oid: `.${ENT}.1.3.0` },
  { id: "t3", metric_name: "tpl_counter", metric_kind: "counter", collection: "scalar", oid: `${ENT}.1.1.0` },
  { id: "t4", metric_name: "tpl_missing", metric_kind: "gauge", collection: "scalar", oid: `${ENT}.1.9.0` },
  { id: "t5", metric_name: "tpl_exact", metric_kind: "counter", collection: "scalar", oid: `${ENT}.1.4.0` },
  { id: "t6", metric_name: "tpl_table_gauge", metric_kind: "gauge", collection: "table", oid: `${ENT}.2.1.2` },
  { id: "t7", metric_name: "tpl_table_counter", metric_kind: "counter", collection: "table", oid: `${ENT}.2.1.3` },
  { id: "t8", metric_name: "tpl_table_exact", metric_kind: "counter", collection: "table", oid: `${ENT}.2.1.4` },
];

beforeAll(async () => {
  sim = await startSnmpsim({
    shippedRecordings: true,
    devices: [
      {
        community: "synth",
        sysName: "sim-0001",
        sysObjectId: "1.3.6.1.4.1.8072.3.2.10",
        interfaces: SYNTH_IFS,
        extra: [
          [`${ENT}.1.1.0`, "70:numeric", "rate=500,initial=1000000"],
          [`${ENT}.1.2.0`, "2", 42],
          [`${ENT}.1.3.0`, "4", "0.75"],
          [`${ENT}.1.4.0`, "70", "18446744073709551615"],
          ...[1, 2, 3].map((r): [string, string, number] => [`${ENT}.2.1.2.${r}`, "66", 10 * r]),
          ...[1, 2].map((r): [string, string, string] => [`${ENT}.2.1.3.${r}`, "65:numeric", `rate=${100 * r},wrap=1`]),
          [`${ENT}.2.1.4.1`, "70", "9007199254740993"],
          [`${ENT}.2.1.4.2`, "70", "12345678901234567891"],
        ],
      },
      {
        community: "wrap32",
        sysName: "wrap-32",
        hc: false,
        hostResources: false,
        interfaces: [{ name: "TenGigabitEthernet1/1", inBytesPerSec: WRAP_BYTES_PER_SEC, outBytesPerSec: 1000, speedMbps: 10_000 }],
      },
      {
        community: "exact",
        sysName: "exact-64",
        hostResources: false,
        interfaces: [{ name: "Ethernet1", inBytesPerSec: 0, outBytesPerSec: 0, speedMbps: 100, hcStatic: EXACT_HC }],
      },
    ],
  });
  snmpd = await startSnmpd({
    users: [
      { user: "peeruser", auth: "SHA", authKey: "peerauthpass", priv: "AES", privKey: "peerprivpass" },
      { user: "u256", auth: "SHA-256", authKey: "authpass256", priv: "AES-256", privKey: "privpass256" },
      { user: "u192", auth: "SHA-512", authKey: "authpass512", priv: "AES-192", privKey: "privpass192" },
      { user: "u224", auth: "SHA-224", authKey: "authpass224" },
      { user: "umd5", auth: "MD5", authKey: "authpassmd5", priv: "DES", privKey: "privpassdes" },
    ],
  });
});
afterAll(async () => {
  await sim?.stop();
  await snmpd?.stop();
  await stopAllSnmpAgents();
});

describe("SNMP v2c against snmpsim", () => {
  it("reads the system group, IF-MIB with 64-bit counters, and HOST-RESOURCES rows", async () => {
    const r = await poller.poll(target(sim.port, v2c("synth")));
    expect(r.answered).toBe(true);
    expect(r.error).toBeNull();
    expect(r.facts).toEqual({
      sys_descr: "Synthetic sim-0001 (4 interfaces)",
      sys_object_id: "1.3.6.1.4.1.8072.3.2.10",
      sys_name: "sim-0001",
      uptime_ticks: expect.any(Number),
    });
    expect(r.interfaces.map((i) => [i.ifindex, i.if_name, i.if_alias, i.if_speed_bps, i.oper_up, i.counter_bits])).toEqual([
      [1, "Gi0/1", "port 1 of sim-0001", 10_000_000_000, true, 64],
      [2, "Gi0/2", "port 2 of sim-0001", 1_000_000_000, true, 64],
      [3, "Gi0/3", "port 3 of sim-0001", 1_000_000_000, true, 64],
      [4, "Gi0/4", "port 4 of sim-0001", 1_000_000_000, false, 64],
    ]);
    // HC counters start above 2^32, so the 32-bit ones cannot be what was read
    for (const i of r.interfaces) expect(BigInt(i.counters.in_octets!)).toBeGreaterThan(5_000_000_000n);
    expect(r.interfaces[0].counters).toMatchObject({ out_errors: "0", in_discards: "0", out_discards: "0" });
    expect(r.rows).toEqual([
      ...HR_CPUS.map(([row, load]) => ({ metric: "cpu_load_pct", row, row_name: `cpu ${row}`, value: load })),
      ...HR_STORAGE.map(([row, descr, , size, used]) => ({ metric: "storage_used_pct", row, row_name: descr, value: (used / size) * 100 })),
    ]);
    // system group and the first rows of every column share the first GetBulk
    expect(r.requests).toBeLessThanOrEqual(3);
  });

  it("reads the real Linux and Cisco walks shipped with snmpsim (real sysObjectIDs)", async () => {
    if (sim.shipped.length < 2) {
      throw new Error("snmpsim's example walks are missing from /usr/share/doc/snmpsim/examples/data (is /usr/share/doc excluded by dpkg?)");
    }
    const linux = await poller.poll(target(sim.port, v2c("linux")));
    expect(linux.facts).toMatchObject({ sys_object_id: "1.3.6.1.4.1.8072.3.2.10", sys_name: "tt" });
    expect(linux.facts?.sys_descr).toMatch(/^Linux cray 2\.6\.21/);
    expect(linux.interfaces.map((i) => i.if_name)).toEqual(expect.arrayContaining(["lo", "eth0"]));
    expect(linux.rows.filter((row) => row.metric === "cpu_load_pct").map((row) => row.row_name)).toEqual(["cpu 768", "cpu 769"]);

    const cisco = await poller.poll(target(sim.port, v2c("cisco16")));
    expect(cisco.facts).toMatchObject({ sys_object_id: "1.3.6.1.4.1.9.1.516", sys_name: "Profiler3750" });
    expect(cisco.facts?.sys_descr).toMatch(/^Cisco IOS Software, C3750 Software/);
    expect(cisco.interfaces.length).toBe(59);
    expect(cisco.interfaces.filter((i) => i.counter_bits === 64).length).toBeGreaterThanOrEqual(50);
    expect(cisco.rows).toEqual([]);
    expect(cisco.error).toBeNull();
  });

  it("keeps Counter64 values exact (decimal strings, beyond 2^53 and up to 2^64 - 1)", async () => {
    const r = await poller.poll(target(sim.port, v2c("exact")));
    expect(r.interfaces[0].counters.in_octets).toBe(EXACT_HC[0]);
    expect(r.interfaces[0].counters.out_octets).toBe(EXACT_HC[1]);
  });

  it("computes rates across two real polls at the agent's known growth rates", async () => {
    const a = await poller.poll(target(sim.port, v2c("synth")));
    await sleep(2500);
    const b = await poller.poll(target(sim.port, v2c("synth")));
    const rates = ratesBetween(a, b);
    // The tolerance covers sysUpTime's 10 ms resolution and the gap between the first GetBulk
    // (which carries sysUpTime) and the next ones over a 2.5 s interval.
    for (const it of SYNTH_IFS) {
      const i = SYNTH_IFS.indexOf(it) + 1;
      const m = rates.get(i)!;
      expect(Math.abs(m.if_in_bps / (it.inBytesPerSec * 8) - 1)).toBeLessThan(0.03);
      expect(Math.abs(m.if_out_bps / (it.outBytesPerSec * 8) - 1)).toBeLessThan(0.03);
      expect(Math.abs(m.if_util_in_pct / ((it.inBytesPerSec * 8 * 100) / (it.speedMbps * 1e6)) - 1)).toBeLessThan(0.03);
      expect(m.if_out_discards_ps).toBe(0);
    }
    expect(rates.get(1)!.if_in_errors_ps).toBeGreaterThan(4);
    expect(rates.get(1)!.if_in_errors_ps).toBeLessThan(6);
    expect(rates.get(2)!.if_in_errors_ps).toBe(0);
  });

  it("handles a real 32-bit counter wrap (ifInOctets past 2^32 between two polls)", async () => {
    const poll = () => poller.poll(target(sim.port, v2c("wrap32")));
    let a = await poll();
    expect(a.interfaces[0].counter_bits).toBe(32);
    // Start from the upper part of the range, so that the next poll lands just past one wrap.
    while (BigInt(a.interfaces[0].counters.in_octets!) < 1_000_000_000n) {
      await sleep(250);
      a = await poll();
    }
    const c1 = BigInt(a.interfaces[0].counters.in_octets!);
    await sleep((Number(4294967295n - c1) / WRAP_BYTES_PER_SEC) * 1000 + 400);
    const b = await poll();
    expect(BigInt(b.interfaces[0].counters.in_octets!)).toBeLessThan(c1);
    const m = ratesBetween(a, b).get(1)!;
    expect(Math.abs(m.if_in_bps / (WRAP_BYTES_PER_SEC * 8) - 1)).toBeLessThan(0.03);
    expect(m.if_util_in_pct).toBeGreaterThan(75);
    expect(m.if_util_in_pct).toBeLessThan(85);
  });

  it("gives no rate (and nothing negative) across an agent restart, and rates again after it", async () => {
    const a = await poller.poll(target(sim.port, v2c("synth")));
    await sim.restart(); // sysUpTime and counters start over, like a reboot
    const b = await poller.poll(target(sim.port, v2c("synth")));
    expect(b.facts!.uptime_ticks!).toBeLessThan(a.facts!.uptime_ticks!);
    expect(BigInt(b.interfaces[0].counters.in_octets!)).toBeLessThan(BigInt(a.interfaces[0].counters.in_octets!));
    for (const m of ratesBetween(a, b).values()) expect(m).toEqual({});
    await sleep(1500);
    const c = await poller.poll(target(sim.port, v2c("synth")));
    const m = ratesBetween(b, c).get(2)!;
    expect(Math.abs(m.if_in_bps / (SYNTH_IFS[1].inBytesPerSec * 8) - 1)).toBeLessThan(0.03);
  });

  it("answers {answered: false} within timeout × (retries + 1) when the agent stops answering, never throwing", async () => {
    const quick = new SnmpPoller({ timeoutMs: 300, retries: 1 });
    expect(quick.silentAgentMs).toBe(600);
    sim.pause();
    try {
      const started = Date.now();
      const r = await quick.poll(target(sim.port, v2c("synth")));
      const took = Date.now() - started;
      expect(r).toMatchObject({ answered: false, facts: null, interfaces: [], rows: [], scalars: [], failure: "timeout" });
      expect(took).toBeGreaterThanOrEqual(550);
      expect(took).toBeLessThan(1200);
    } finally {
      sim.resume();
    }
    expect((await quick.poll(target(sim.port, v2c("synth")))).answered).toBe(true);
    // nothing listening at all
    expect(await quick.poll(target(await freeUdpPort(), v2c("public")))).toMatchObject({ answered: false, failure: "timeout" });
    // a wrong community is not answered either (snmpd ignores it)
    expect((await quick.poll(target(snmpd.port, v2c("not-the-community")))).answered).toBe(false);
  });

  it("never throws on what it cannot use: no credential, an incomplete v3 credential, a bad address", async () => {
    expect(await poller.poll(target(sim.port, null))).toMatchObject({ answered: false, failure: "unsupported" });
    expect(await poller.poll(target(sim.port, { version: "3", security_level: "authPriv" }))).toMatchObject({ answered: false, failure: "unsupported" });
    expect(await poller.poll(target(sim.port, simV3({ priv_key: undefined })))).toMatchObject({ answered: false, failure: "unsupported" });
    const unknownAuth = simV3({ auth_protocol: "SHA3" as SnmpCredential["auth_protocol"] });
    expect(await poller.poll(target(sim.port, unknownAuth))).toMatchObject({ answered: false, failure: "unsupported" });
    const bad = await new SnmpPoller({ timeoutMs: 200, retries: 0 }).poll({ ...target(sim.port, v2c("synth")), address: "256.1.2.3" });
    expect(bad.answered).toBe(false);
  });
});

describe("collection template items", () => {
  it("reads scalar and table items: gauges as read, counters raw and exact, missing OIDs skipped", async () => {
    const r = await poller.poll(target(sim.port, v2c("synth"), TEMPLATES));
    expect(r.error).toBeNull();
    expect(r.scalars).toEqual([
      { metric: "tpl_gauge", kind: "gauge", value: "42" },
      { metric: "tpl_text_gauge", kind: "gauge", value: "0.75" },
      { metric: "tpl_counter", kind: "counter", value: expect.stringMatching(/^[0-9]+$/) },
      { metric: "tpl_exact", kind: "counter", value: "18446744073709551615" },
    ]);
    expect(r.rows.filter((row) => row.metric === "tpl_table_gauge")).toEqual(
      [1, 2, 3].map((row) => ({ metric: "tpl_table_gauge", row, row_name: null, value: 10 * row })),
    );
    expect(r.template_counters.filter((c) => c.metric === "tpl_table_exact")).toEqual([
      { metric: "tpl_table_exact", row: 1, row_name: null, value: "9007199254740993", bits: 64 },
      { metric: "tpl_table_exact", row: 2, row_name: null, value: "12345678901234567891", bits: 64 },
    ]);
    expect(r.template_counters.find((c) => c.metric === "tpl_counter")).toMatchObject({ row: null, bits: 64 });
    expect(r.template_counters.filter((c) => c.metric === "tpl_table_counter").map((c) => [c.row, c.bits])).toEqual([
      [1, 32],
      [2, 32],
    ]);
    // template counters are not gauges: they are not in rows
    expect(r.rows.some((row) => row.metric === "tpl_table_counter")).toBe(false);
  });

  it("turns template counters into per-second rates across two polls", async () => {
    const a = await poller.poll(target(sim.port, v2c("synth"), TEMPLATES));
    // 4 s apart: the simulator's counters follow its clock, ours the reply's arrival; on a loaded machine a
    // reply late by 100 ms skews a 2 s window by 5 %.
    await sleep(4000);
    const b = await poller.poll(target(sim.port, v2c("synth"), TEMPLATES));
    const point = (r: SnmpPollOutcome, metric: string, row: number | null): CounterState => {
      const c = r.template_counters.find((x) => x.metric === metric && x.row === row)!;
      return { value: c.value, bits: c.bits, uptime_ticks: r.facts!.uptime_ticks, at_unix_ms: r.at_unix_ms };
    };
    const rate = (metric: string, row: number | null) => counterRate(point(a, metric, row), point(b, metric, row)).rate!;
    expect(Math.abs(rate("tpl_counter", null) / 500 - 1)).toBeLessThan(0.03);
    expect(Math.abs(rate("tpl_table_counter", 1) / 100 - 1)).toBeLessThan(0.05);
    expect(Math.abs(rate("tpl_table_counter", 2) / 200 - 1)).toBeLessThan(0.05);
    expect(rate("tpl_table_exact", 2)).toBe(0);
  });
});

describe("SNMPv3 and SNMPv1", () => {
  it("polls snmpsim with authPriv SHA/AES; a wrong key gets {answered: false}", async () => {
    const r = await poller.poll(target(sim.port, simV3()));
    expect(r.answered).toBe(true);
    expect(r.facts?.sys_name).toBe("sim-0001");
    expect(r.interfaces).toHaveLength(4);
    const wrong = await new SnmpPoller({ timeoutMs: 300, retries: 1 }).poll(target(sim.port, simV3({ auth_key: "not-the-auth-key" })));
    expect(wrong).toMatchObject({ answered: false, facts: null });
  });

  it("polls snmpd (real data of this host) with v3 authPriv SHA/AES, SHA-256/AES-256, SHA-512/AES-192 and authNoPriv SHA-224", async () => {
    const creds: SnmpCredential[] = [
      {
        version: "3",
        user: "peeruser",
        security_level: "authPriv",
        auth_protocol: "SHA",
        auth_key: "peerauthpass",
        priv_protocol: "AES",
        priv_key: "peerprivpass",
      },
      {
        version: "3",
        user: "u256",
        security_level: "authPriv",
        auth_protocol: "SHA256",
        auth_key: "authpass256",
        priv_protocol: "AES256",
        priv_key: "privpass256",
      },
      {
        version: "3",
        user: "u192",
        security_level: "authPriv",
        auth_protocol: "SHA512",
        auth_key: "authpass512",
        priv_protocol: "AES192",
        priv_key: "privpass192",
      },
      { version: "3", user: "u224", security_level: "authNoPriv", auth_protocol: "SHA224", auth_key: "authpass224" },
    ];
    for (const cred of creds) {
      const r = await poller.poll(target(snmpd.port, cred));
      expect({ user: cred.user, answered: r.answered, name: r.facts?.sys_name }).toEqual({ user: cred.user, answered: true, name: `snmpd-test-${snmpd.port}` });
      const lo = r.interfaces.find((i) => i.if_name === "lo");
      expect(lo?.counter_bits).toBe(64);
      expect(r.rows.some((row) => row.metric === "storage_used_pct" && row.row_name === "Physical memory")).toBe(true);
    }
  });

  it("refuses a wrong v3 authentication key (auth) and a wrong privacy key (no answer) with {answered: false}", async () => {
    const quick = new SnmpPoller({ timeoutMs: 300, retries: 1 });
    const base: SnmpCredential = {
      version: "3",
      user: "peeruser",
      security_level: "authPriv",
      auth_protocol: "SHA",
      auth_key: "peerauthpass",
      priv_protocol: "AES",
      priv_key: "peerprivpass",
    };
    const started = Date.now();
    expect(await quick.poll(target(snmpd.port, { ...base, auth_key: "wrong-auth-key" }))).toMatchObject({ answered: false, failure: "auth" });
    expect(await quick.poll(target(snmpd.port, { ...base, priv_key: "wrong-priv-key" }))).toMatchObject({ answered: false });
    expect(await quick.poll(target(snmpd.port, { ...base, user: "nosuchuser" }))).toMatchObject({ answered: false });
    expect(Date.now() - started).toBeLessThan(3 * quick.silentAgentMs + 500);
  });

  it("DES privacy works where the runtime still offers DES, else answers {answered: false, failure: unsupported}", async () => {
    let des = true;
    try {
      createCipheriv("des-cbc", Buffer.alloc(8), Buffer.alloc(8));
    } catch {
      des = false;
    }
    const r = await poller.poll(
      target(snmpd.port, {
        version: "3",
        user: "umd5",
        security_level: "authPriv",
        auth_protocol: "MD5",
        auth_key: "authpassmd5",
        priv_protocol: "DES",
        priv_key: "privpassdes",
      }),
    );
    expect(r.answered).toBe(des);
    if (!des) expect(r.failure).toBe("unsupported");
  });

  it("polls with SNMPv1 through GetNext (no GetBulk, no Counter64): 32-bit counters", async () => {
    const r = await poller.poll(target(snmpd.port, { version: "1", community: "public" }));
    expect(r.answered).toBe(true);
    expect(r.facts?.sys_name).toBe(`snmpd-test-${snmpd.port}`);
    expect(r.interfaces.length).toBeGreaterThan(0);
    expect(r.interfaces.every((i) => i.counter_bits === 32)).toBe(true);
    expect(r.interfaces.find((i) => i.if_name === "lo")?.counters.in_octets).toMatch(/^[0-9]+$/);
  });

  it("reads v1 template scalars when one of them is missing (v1 fails the whole GET: asked one by one)", async () => {
    const r = await poller.poll(target(sim.port, { version: "1", community: "synth" }, TEMPLATES.slice(0, 4)));
    expect(r.answered).toBe(true);
    expect(r.scalars).toEqual(expect.arrayContaining([{ metric: "tpl_gauge", kind: "gauge", value: "42" }]));
    expect(r.scalars.some((s) => s.metric === "tpl_missing")).toBe(false);
  });

  it("rates from two polls of snmpd are never negative", async () => {
    const a = await poller.poll(target(snmpd.port, v2c("public")));
    await sleep(1100);
    const b = await poller.poll(target(snmpd.port, v2c("public")));
    const rates = ratesBetween(a, b);
    expect(rates.size).toBeGreaterThan(0);
    for (const m of rates.values()) for (const v of Object.values(m)) expect(v).toBeGreaterThanOrEqual(0);
  });
});
