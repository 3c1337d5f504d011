/**
 * The pure parts of the trap listener: varbind values as text, the v1 → v2 mapping's edge cases,
 * the BER envelope check, raw dumps without the community, and source addresses.
 */
import { messageVersion, rawHex } from "../traps/ber.js";
import { convertVarbind, MalformedTrap, octetsText, toTrapMessage, type RawPdu } from "../traps/convert.js";
import { sourceIp } from "../traps/receiver.js";
import { ber } from "../../../test/support/trapSenders.js";

const V2C = { version: "v2c", community: "public", user: null } as const;
const V1 = { version: "v1", community: "public", user: null } as const;

describe("varbind values", () => {
  test("octet strings: printable UTF-8 as text, anything else as hex", () => {
    expect(octetsText(Buffer.from("plain ascii"))).toBe("plain ascii");
    expect(octetsText(Buffer.from("naïve ☃"))).toBe("naïve ☃");
    expect(octetsText(Buffer.alloc(0))).toBe("");
    expect(octetsText(Buffer.from([0x61, 0x00, 0x62]))).toBe("0x610062");
    expect(octetsText(Buffer.from([0xff, 0xfe]))).toBe("0xfffe");
    expect(octetsText(Buffer.from([0x1b, 0x5b, 0x32, 0x4a]))).toBe("0x1b5b324a"); // an escape sequence
    expect(octetsText(Buffer.from([0x7f]))).toBe("0x7f");
  });

  test("numbers, Counter64 of any width, unknown types", () => {
    expect(convertVarbind({ oid: "1.2", type: 70, value: Buffer.alloc(0) })).toEqual({ oid: "1.2", type: "Counter64", value: "0" });
    expect(convertVarbind({ oid: "1.2", type: 70, value: Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]) }).value).toBe("72057594037927936");
    expect(convertVarbind({ oid: "1.2", type: 70, value: Buffer.from([0x12, 0x34]) }).value).toBe("4660");
    expect(convertVarbind({ oid: "1.2", type: 66, value: 7 })).toEqual({ oid: "1.2", type: "Gauge32", value: 7 });
    expect(convertVarbind({ oid: "1.2", type: 1, value: true }).value).toBe("true");
    expect(convertVarbind({ oid: "1.2", type: 129, value: null })).toEqual({ oid: "1.2", type: "NoSuchInstance", value: null });
    expect(convertVarbind({ oid: "1.2", type: 99, value: "a\u0000b" })).toEqual({ oid: "1.2", type: "Type99", value: "0x610062" });
    expect(convertVarbind({ oid: "1.2", type: 99, value: "lone \ud800" }).value).toBe("lone \ufffd"); // replaced, never kept lone
  });
});

describe("notification mapping", () => {
  const v1 = (generic: number, specific = 0): RawPdu => ({
    type: 164,
    enterprise: "1.3.6.1.4.1.9",
    agentAddr: "10.0.0.1",
    generic,
    specific,
    upTime: 1,
    varbinds: [],
  });

  test("v1 generic traps 0..5 map to snmpTraps.(generic + 1); 6 to enterprise.0.specific", () => {
    for (let g = 0; g <= 5; g++) expect(toTrapMessage(v1(g), V1).trap_oid).toBe(`1.3.6.1.6.3.1.1.5.${g + 1}`);
    expect(toTrapMessage(v1(6, 42), V1).trap_oid).toBe("1.3.6.1.4.1.9.0.42");
  });

  test("a v1 trap that already names snmpTrapAddress.0 is not given a second one", () => {
    const pdu = { ...v1(0), varbinds: [{ oid: "1.3.6.1.6.3.18.1.3.0", type: 64, value: "10.9.9.9" }] };
    expect(toTrapMessage(pdu, V1).varbinds.map((v) => [v.oid, v.value])).toEqual([
      ["1.3.6.1.6.3.18.1.3.0", "10.9.9.9"],
      ["1.3.6.1.6.3.1.1.4.3.0", "1.3.6.1.4.1.9"],
    ]);
  });

  test("malformed notifications", () => {
    expect(() => toTrapMessage(v1(7), V1)).toThrow(MalformedTrap);
    expect(() => toTrapMessage(v1(-1), V1)).toThrow(MalformedTrap);
    expect(() => toTrapMessage({ type: 167, varbinds: [] }, V1)).toThrow(/SNMPv2 PDU/);
    expect(() => toTrapMessage(v1(0), V2C)).toThrow(MalformedTrap);
    expect(() => toTrapMessage({ type: 167, varbinds: [{ oid: "1.3.6.1.2.1.1.3.0", type: 67, value: 5 }] }, V2C)).toThrow(/snmpTrapOID/);
  });

  test("snmpTrapOID.0 and sysUpTime.0 are found wherever they are and taken out once", () => {
    const m = toTrapMessage(
      {
        type: 166,
        varbinds: [
          { oid: "1.3.6.1.6.3.1.1.4.1.0", type: 6, value: "1.3.6.1.6.3.1.1.5.1" },
          { oid: "1.3.6.1.2.1.1.3.0", type: 67, value: 99 },
          { oid: "1.3.6.1.2.1.1.3.0", type: 67, value: 100 },
        ],
      },
      V2C,
    );
    expect(m).toMatchObject({ pdu: "inform", trap_oid: "1.3.6.1.6.3.1.1.5.1", uptime: 99, varbinds: [{ oid: "1.3.6.1.2.1.1.3.0", value: 100 }] });
  });
});

describe("BER envelope and raw dumps", () => {
  test("versions 0, 1 and 3 only, one SEQUENCE filling the datagram", () => {
    expect(messageVersion(ber.community(0, "c", 0xa4, []))).toBe(0);
    expect(messageVersion(ber.community(1, "c", 0xa7, []))).toBe(1);
    expect(messageVersion(ber.community(2, "c", 0xa7, []))).toBeNull();
    expect(messageVersion(Buffer.alloc(0))).toBeNull();
    expect(messageVersion(Buffer.concat([ber.community(1, "c", 0xa7, []), Buffer.from([0])]))).toBeNull();
  });

  test("a long community (long-form length) is overwritten in raw dumps, even when cut", () => {
    const community = "x".repeat(200);
    const msg = ber.community(1, community, 0xa7, []);
    const raw = rawHex(msg);
    expect(raw).not.toContain("78".repeat(10));
    expect(raw).toContain("2a".repeat(200));
    expect(rawHex(msg.subarray(0, 50))).toBe(
      "0x" +
        msg
          .subarray(0, 50)
          .toString("hex")
          .replace(/(78)+$/, (m) => "2a".repeat(m.length / 2)),
    );
    expect(rawHex(Buffer.alloc(600, 1)).length).toBe(2 + 1024);
  });

  test("v4-mapped IPv6 sources are IPv4", () => {
    expect(sourceIp("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(sourceIp("::FFFF:192.0.2.1")).toBe("192.0.2.1");
    expect(sourceIp("2001:db8::1")).toBe("2001:db8::1");
    expect(sourceIp("::ffff:c000:201")).toBe("::ffff:c000:201");
    expect(sourceIp("10.1.1.1")).toBe("10.1.1.1");
  });
});
