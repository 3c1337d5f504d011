/** The pure parts: MIB parsing, neighbour resolution and the upstream search. */
import { manAddrOfIndex, OID, parseWalk, renderId, type RawWalk } from "../lib/mibs.js";
import { Resolver } from "../lib/resolve.js";
import { computeUpstream, pathOf, wouldLoop } from "../lib/upstream.js";

const hex = (h: string) => Buffer.from(h, "hex");

describe("parseWalk", () => {
  it("reads LLDP neighbours with their management addresses and local ports, and CDP neighbours with their addresses", () => {
    const raw: RawWalk = new Map<string, Buffer | number | null>([
      [OID.lldpLocChassisIdSubtype, 4],
      [OID.lldpLocChassisId, hex("0011223344aa")],
      [OID.sysName, Buffer.from("sw1.example.net")],
      [`${OID.ifDescr}.7`, Buffer.from("GigabitEthernet1/0/7")],
      [`${OID.ifName}.7`, Buffer.from("Gi1/0/7")],
      [`${OID.ifDescr}.9`, Buffer.from("GigabitEthernet1/0/9")],
      // lldpLocPortNum 3 is ifIndex 7 (its port id names the interface).
      [`${OID.lldpLocPortEntry}.2.3`, 5],
      [`${OID.lldpLocPortEntry}.3.3`, Buffer.from("Gi1/0/7")],
      [`${OID.lldpRemEntry}.4.100.3.1`, 4],
      [`${OID.lldpRemEntry}.5.100.3.1`, hex("00aabbccddee")],
      [`${OID.lldpRemEntry}.6.100.3.1`, 3],
      [`${OID.lldpRemEntry}.7.100.3.1`, hex("00aabbccdd01")],
      [`${OID.lldpRemEntry}.9.100.3.1`, Buffer.from("core\0")],
      [`${OID.lldpRemManAddrEntry}.3.100.3.1.1.4.10.0.0.1`, 2],
      [`${OID.lldpRemManAddrEntry}.3.100.3.1.2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1`, 2],
      [`${OID.cdpCacheEntry}.3.9.4`, 1],
      [`${OID.cdpCacheEntry}.4.9.4`, hex("c0a80102")],
      [`${OID.cdpCacheEntry}.6.9.4`, Buffer.from("ap-17")],
      [`${OID.cdpCacheEntry}.7.9.4`, Buffer.from("GigabitEthernet0")],
      [`${OID.cdpCacheEntry}.8.9.4`, Buffer.from("cisco AIR-AP")],
    ]);
    const w = parseWalk(raw);
    expect(w.chassisKey).toBe("00:11:22:33:44:aa");
    expect(w.sysName).toBe("sw1.example.net");
    expect(w.observations).toEqual([
      {
        protocol: "lldp",
        localPortKey: "gi1/0/7",
        localIfindex: 7,
        localPort: "Gi1/0/7",
        remoteKey: "00:aa:bb:cc:dd:ee",
        chassisId: "00:aa:bb:cc:dd:ee",
        sysName: "core",
        portKey: "00:aa:bb:cc:dd:01",
        port: "00:aa:bb:cc:dd:01",
        mgmtAddresses: ["10.0.0.1", "2001:db8::1"],
        platform: null,
      },
      {
        protocol: "cdp",
        localPortKey: "gigabitethernet1/0/9",
        localIfindex: 9,
        localPort: "GigabitEthernet1/0/9",
        remoteKey: "ap-17",
        chassisId: null,
        sysName: "ap-17",
        portKey: "gigabitethernet0",
        port: "GigabitEthernet0",
        mgmtAddresses: ["192.168.1.2"],
        platform: "cisco AIR-AP",
      },
    ]);
  });

  it("renders ids by subtype and refuses a malformed management address index", () => {
    expect(renderId(5, hex("010a000001"), 4, 5)).toBe("10.0.0.1");
    expect(renderId(7, Buffer.from("port 1"), 4, 5)).toBe("port 1");
    expect(renderId(7, hex("00ff"), 4, 5)).toBe("00:ff");
    expect(manAddrOfIndex([1, 4, 10, 0, 0])).toBeNull();
    expect(manAddrOfIndex([1, 4, 10, 0, 0, 300])).toBeNull();
    expect(parseWalk(new Map()).observations).toEqual([]);
  });
});

describe("Resolver", () => {
  const nodes = [
    { id: "n1", name: "core.example.net", address: "10.0.0.1" },
    { id: "n2", name: "edge", address: "10.0.0.2" },
    { id: "n3", name: "edge", address: "10.0.0.3" },
  ];
  const r = new Resolver(nodes, [{ node_id: "n2", chassis_key: "00:00:00:00:00:02", sys_name: "edge-a" }], (ip) => (ip === "10.9.9.9" ? "n3" : null));
  const obs = (o: Partial<{ mgmtAddresses: string[]; chassisId: string | null; sysName: string | null }>) => ({
    mgmtAddresses: [],
    chassisId: null,
    sysName: null,
    ...o,
  });

  it("resolves by address first, then chassis id, then sysName (full or first label)", () => {
    expect(r.resolve(obs({ mgmtAddresses: ["10.0.0.1"], chassisId: "00:00:00:00:00:02" }))).toEqual({ nodeId: "n1", by: "address" });
    expect(r.resolve(obs({ mgmtAddresses: ["10.9.9.9"] }))).toEqual({ nodeId: "n3", by: "address" });
    expect(r.resolve(obs({ mgmtAddresses: ["10.1.1.1"], chassisId: "00:00:00:00:00:02" }))).toEqual({ nodeId: "n2", by: "chassis_id" });
    expect(r.resolve(obs({ sysName: "CORE" }))).toEqual({ nodeId: "n1", by: "sys_name" });
    expect(r.resolve(obs({ sysName: "edge-a.lab" }))).toEqual({ nodeId: "n2", by: "sys_name" });
  });

  it("resolves nothing by a name two nodes share", () => {
    expect(r.resolve(obs({ sysName: "edge" }))).toBeNull();
    expect(r.resolve(obs({ sysName: "nobody" }))).toBeNull();
  });
});

describe("computeUpstream", () => {
  const nodes = ["core", "d1", "d2", "a1", "a2", "a3", "lone"].map((id) => ({ id, pool: "p" }));
  const links: [string, string][] = [
    ["core", "d1"],
    ["core", "d2"],
    ["d1", "a1"],
    ["d1", "a2"],
    ["d2", "a3"],
    ["a2", "d2"],
  ];

  it("searches from the configured seed; the busiest node is the seed otherwise", () => {
    const g = computeUpstream(nodes, links, { p: "core" }, new Map());
    expect(g.seeds.get("p")).toBe("core");
    expect(g.entries.get("core")).toEqual({ parent: null, via: "seed" });
    expect(g.entries.get("a3")).toEqual({ parent: "d2", via: "link" });
    expect(pathOf(g, "a2")).toEqual(["d1", "core"]);
    expect(g.entries.get("lone")).toEqual({ parent: null, via: null });
    const busiest = computeUpstream(nodes, links, {}, new Map());
    expect(busiest.seeds.get("p")).toBe("d1"); // d1 and d2 have three links; the lower id wins
  });

  it("a pin wins, a loop through pins ends the path, and wouldLoop sees it coming", () => {
    const g = computeUpstream(nodes, links, { p: "core" }, new Map([["a2", "d2"]]));
    expect(g.entries.get("a2")).toEqual({ parent: "d2", via: "pin" });
    expect(pathOf(g, "a2")).toEqual(["d2", "core"]);
    expect(wouldLoop(g, "d2", "a2")).toBe(true);
    expect(wouldLoop(g, "a1", "a1")).toBe(true);
    const looped = computeUpstream(nodes, links, { p: "core" }, new Map([["core", "a1"]]));
    expect(pathOf(looped, "a1")).toEqual(["d1", "core"]);
  });

  it("each pool searches from its own seed, through other pools' nodes", () => {
    const mixed = [
      { id: "s1", pool: "east" },
      { id: "x", pool: "west" },
      { id: "y", pool: "east" },
      { id: "s2", pool: "west" },
    ];
    const g = computeUpstream(
      mixed,
      [
        ["s1", "x"],
        ["x", "y"],
        ["s2", "y"],
      ],
      { east: "s1", west: "s2" },
      new Map(),
    );
    expect(pathOf(g, "y")).toEqual(["x", "s1"]);
    expect(pathOf(g, "x")).toEqual(["y", "s2"]);
  });
});
