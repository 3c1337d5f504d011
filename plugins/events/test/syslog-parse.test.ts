/** The syslog parser on real examples (RFC 5424 §6.5, Linux and logger RFC 3164, Cisco IOS) and a fuzz corpus. */
import { randomBytes } from "node:crypto";
import type { SyslogMessage } from "../lib/types.js";
import { cleanText, parseSyslog, rawText, type ParseResult } from "../syslog/parse.js";

const NOW = Date.UTC(2026, 10, 24, 10, 0, 0); // 2026-11-24T10:00:00Z
const BOM = "\uFEFF";

function ok(text: string | Buffer, now = NOW): SyslogMessage {
  const r = parseSyslog(typeof text === "string" ? Buffer.from(text, "utf8") : text, now);
  if (!r.ok) throw new Error(`expected ok for ${JSON.stringify(text.toString())}, got ${r.reason}`);
  return r.msg;
}

function fail(text: string | Buffer): Extract<ParseResult, { ok: false }> {
  const r = parseSyslog(typeof text === "string" ? Buffer.from(text, "utf8") : text, NOW);
  if (r.ok) throw new Error(`expected a failure for ${JSON.stringify(text.toString())}, got ${JSON.stringify(r.msg)}`);
  return r;
}

/** True when the string holds a NUL or a lone surrogate. */
function unsafe(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

function assertSafe(r: ParseResult): void {
  const strings: string[] = [];
  if (!r.ok) {
    if (r.raw !== null) strings.push(r.raw);
  } else {
    const m = r.msg;
    for (const v of [m.timestamp, m.hostname, m.app_name, m.procid, m.msgid, m.message]) if (v !== null) strings.push(v);
    for (const e of m.structured_data) {
      strings.push(e.id);
      for (const [k, v] of e.params) strings.push(k, v);
    }
    if (m.cisco) strings.push(m.cisco.facility, m.cisco.mnemonic);
  }
  for (const s of strings) if (unsafe(s)) throw new Error(`unsafe string in ${JSON.stringify(r)}`);
}

describe("RFC 5424", () => {
  it("reads the RFC 5424 §6.5 example 1 (BOM before MSG, NILVALUE procid and SD)", () => {
    const m = ok(`<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - ${BOM}'su root' failed for lonvick on /dev/pts/8`);
    expect(m).toEqual({
      format: "rfc5424",
      facility: 4,
      severity: 2,
      timestamp: "2003-10-11T22:14:15.003Z",
      hostname: "mymachine.example.com",
      app_name: "su",
      procid: null,
      msgid: "ID47",
      structured_data: [],
      message: "'su root' failed for lonvick on /dev/pts/8",
      cisco: null,
    });
  });

  it("reads example 2: microsecond fraction and a negative offset normalised to UTC", () => {
    const m = ok("<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.");
    expect(m.timestamp).toBe("2003-08-24T12:14:15.000Z");
    expect(m.facility).toBe(20);
    expect(m.severity).toBe(5);
    expect([m.hostname, m.app_name, m.procid, m.msgid]).toEqual(["192.0.2.1", "myproc", "8710", null]);
    expect(m.message).toBe("%% It's time to make the do-nuts.");
  });

  it("reads example 3 and 4: one and two SD elements, with and without MSG", () => {
    const m = ok(
      `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] ${BOM}An application event log entry...`,
    );
    expect(m.structured_data).toEqual([
      {
        id: "exampleSDID@32473",
        params: [
          ["iut", "3"],
          ["eventSource", "Application"],
          ["eventID", "1011"],
        ],
      },
    ]);
    expect(m.message).toBe("An application event log entry...");
    const m2 = ok(
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
    );
    expect(m2.structured_data.map((e) => e.id)).toEqual(["exampleSDID@32473", "examplePriority@32473"]);
    expect(m2.structured_data[1].params).toEqual([["class", "high"]]);
    expect(m2.message).toBe("");
  });

  it('unescapes \\" \\\\ and \\] in param values and keeps other backslashes; a param may repeat; an element may have no params', () => {
    const m = ok('<14>1 2026-11-24T10:00:00Z h a p m [x@1 q="say \\"hi\\"" b="a\\\\b" r="[1\\]" o="c:\\dir" q="2"][empty@1] body');
    expect(m.structured_data).toEqual([
      {
        id: "x@1",
        params: [
          ["q", 'say "hi"'],
          ["b", "a\\b"],
          ["r", "[1]"],
          ["o", "c:\\dir"],
          ["q", "2"],
        ],
      },
      { id: "empty@1", params: [] },
    ]);
    expect(m.message).toBe("body");
  });

  it("handles all NILVALUEs, offsets with and without fractions, and UTF-8 in values and message", () => {
    const m = ok("<0>1 - - - - - -");
    expect(m).toMatchObject({
      format: "rfc5424",
      facility: 0,
      severity: 0,
      timestamp: null,
      hostname: null,
      app_name: null,
      procid: null,
      msgid: null,
      message: "",
    });
    expect(ok("<13>1 2026-11-24T12:30:00+02:30 h a - - - x").timestamp).toBe("2026-11-24T10:00:00.000Z");
    expect(ok("<13>1 2026-11-24T10:00:00.1Z h a - - - x").timestamp).toBe("2026-11-24T10:00:00.100Z");
    expect(ok("<13>1 2026-11-24T10:00:00.123456789+00:00 h a - - - x").timestamp).toBe("2026-11-24T10:00:00.123Z");
    const u = ok('<13>1 2026-11-24T10:00:00Z h a - - [u@1 v="grüße ✓"] ünïcødé 🎉');
    expect(u.structured_data[0].params[0][1]).toBe("grüße ✓");
    expect(u.message).toBe("ünïcødé 🎉");
  });

  it("reads an unparseable timestamp as null but keeps the rest", () => {
    const m = ok("<13>1 2026-13-45T99:00:00Z host app - - - hello");
    expect(m.format).toBe("rfc5424");
    expect(m.timestamp).toBeNull();
    expect(m.message).toBe("hello");
  });

  it("falls back to raw when the header or SD break the grammar", () => {
    for (const text of [
      '<13>1 2026-11-24T10:00:00Z h a - - [x@1 a="unterminated',
      "<13>1 2026-11-24T10:00:00Z h a",
      "<13>1 2026-11-24T10:00:00Z h a - - x body",
    ]) {
      const m = ok(text);
      expect(m.format).toBe("raw");
      expect(m.message).toBe(text.slice(4));
      expect(m.severity).toBe(5);
    }
  });

  it("strips trailing CR, LF and NUL", () => {
    expect(ok("<13>1 2026-11-24T10:00:00Z h a - - - line\r\n\0").message).toBe("line");
  });
});

describe("RFC 3164", () => {
  it("reads a Linux line with tag[pid]", () => {
    const m = ok("<38>Nov 24 09:59:58 web01 sshd[1234]: Accepted publickey for root from 10.0.0.1 port 5022 ssh2");
    expect(m).toEqual({
      format: "rfc3164",
      facility: 4,
      severity: 6,
      timestamp: "2026-11-24T09:59:58.000Z",
      hostname: "web01",
      app_name: "sshd",
      procid: "1234",
      msgid: null,
      structured_data: [],
      message: "Accepted publickey for root from 10.0.0.1 port 5022 ssh2",
      cisco: null,
    });
  });

  it("reads what logger --rfc3164 sends, and a kernel line with a space-padded day", () => {
    const m = ok("<13>Nov 24 09:00:01 myhost root: hello world");
    expect([m.hostname, m.app_name, m.procid, m.message]).toEqual(["myhost", "root", null, "hello world"]);
    const k = ok("<4>Nov  4 09:00:01 myhost kernel: [12345.678] eth0: link up");
    expect(k.timestamp).toBe("2026-11-04T09:00:01.000Z");
    expect(k.app_name).toBe("kernel");
    expect(k.message).toBe("[12345.678] eth0: link up");
  });

  it("picks the latest year not in the future: December seen in January is last year, a time seconds ahead at New Year is next year", () => {
    const jan1 = Date.UTC(2027, 0, 1, 0, 5);
    expect(ok("<13>Dec 31 23:59:00 h app: x", jan1).timestamp).toBe("2026-12-31T23:59:00.000Z");
    const dec31 = Date.UTC(2026, 11, 31, 23, 59, 50);
    expect(ok("<13>Jan  1 00:00:05 h app: x", dec31).timestamp).toBe("2027-01-01T00:00:05.000Z");
    expect(ok("<13>Mar  1 00:00:00 h app: x").timestamp).toBe("2026-03-01T00:00:00.000Z");
    // Not in the future: March seen in November is this year's, December seen in November last year's.
    expect(ok("<13>Dec  1 00:00:00 h app: x").timestamp).toBe("2025-12-01T00:00:00.000Z");
    // Feb 29 exists only in a leap year: from mid-2027 that is 2024.
    expect(ok("<13>Feb 29 12:00:00 h app: x", Date.UTC(2027, 5, 1)).timestamp).toBe("2024-02-29T12:00:00.000Z");
  });

  it("reads a line without hostname", () => {
    const m = ok("<30>Nov 24 09:00:00 systemd[1]: Started Session 5 of user root.");
    expect([m.hostname, m.app_name, m.procid, m.message]).toEqual([null, "systemd", "1", "Started Session 5 of user root."]);
    const c = ok("<30>Nov 24 09:00:00 cron: job ran");
    expect([c.hostname, c.app_name]).toEqual([null, "cron"]);
  });

  it("reads a line without timestamp (tag first) and one without a tag", () => {
    const m = ok("<13>myapp[77]: no time here");
    expect(m).toMatchObject({ format: "rfc3164", timestamp: null, hostname: null, app_name: "myapp", procid: "77", message: "no time here" });
    const n = ok("<13>Nov 24 09:00:00 host just some words");
    expect(n).toMatchObject({ format: "rfc3164", hostname: "host", app_name: null, message: "just some words" });
  });

  it("reads ISO timestamps sent after the PRI (rsyslog forward format and devices)", () => {
    const m = ok("<134>2026-11-24T11:00:00.5+01:00 fw01 filterlog[555]: 5,,,1000,igb0,match,pass");
    expect([m.format, m.timestamp, m.hostname, m.app_name, m.procid]).toEqual(["rfc3164", "2026-11-24T10:00:00.500Z", "fw01", "filterlog", "555"]);
    expect(ok("<134>2026-11-24T10:00:00 fw01 app: x").timestamp).toBe("2026-11-24T10:00:00.000Z");
  });

  it("reads a year and fraction in a BSD time", () => {
    expect(ok("<13>Nov 24 2025 09:00:00.250 h app: x").timestamp).toBe("2025-11-24T09:00:00.250Z");
  });

  it("keeps text with only a PRI as raw", () => {
    expect(ok("<13>hello world")).toMatchObject({ format: "raw", facility: 1, severity: 5, message: "hello world", timestamp: null, hostname: null });
    expect(ok("<13> leading space").message).toBe(" leading space");
  });
});

describe("Cisco IOS", () => {
  it("reads seq, '*' unsynchronised time with ms, and the mnemonic", () => {
    const m = ok("<189>123: *Mar  1 18:46:11.123: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up");
    expect(m).toEqual({
      format: "cisco",
      facility: 23,
      severity: 5,
      timestamp: "2026-03-01T18:46:11.123Z",
      hostname: null,
      app_name: null,
      procid: null,
      msgid: null,
      structured_data: [],
      message: "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up",
      cisco: { seq: 123, facility: "LINK", severity: 3, mnemonic: "UPDOWN" },
    });
  });

  it("reads lines without seq, with '.' marker, with hostname and a zone name", () => {
    const a = ok("<187>Nov 24 09:59:00.001: %SYS-5-CONFIG_I: Configured from console by vty0");
    expect(a.cisco).toEqual({ seq: null, facility: "SYS", severity: 5, mnemonic: "CONFIG_I" });
    expect(a.timestamp).toBe("2026-11-24T09:59:00.001Z");
    const b = ok("<189>52: router1: .Nov 24 09:00:00 UTC: %LINEPROTO-5-UPDOWN: Line protocol on Interface Vlan1, changed state to down");
    expect([b.hostname, b.timestamp, b.cisco?.seq, b.cisco?.facility, b.cisco?.mnemonic]).toEqual([
      "router1",
      "2026-11-24T09:00:00.000Z",
      52,
      "LINEPROTO",
      "UPDOWN",
    ]);
    const c = ok("<189>52: router1: Nov 24 10:00:00 CET: %SYS-5-RESTART: System restarted");
    expect(c.timestamp).toBe("2026-11-24T09:00:00.000Z");
    const d = ok("<189>Nov 24 2026 09:00:00: %ASA-6-302013: Built inbound TCP connection 1");
    expect(d.cisco).toEqual({ seq: null, facility: "ASA", severity: 6, mnemonic: "302013" });
    const e = ok("<166>%ASA-6-302013: Built inbound TCP connection 2");
    expect([e.format, e.timestamp, e.cisco?.facility]).toEqual(["cisco", null, "ASA"]);
  });

  it("reads uptime stamps and facilities with '_' or '-'", () => {
    const a = ok("<189>17: 1w2d: %SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: admin]");
    expect(a.cisco).toEqual({ seq: 17, facility: "SEC_LOGIN", severity: 5, mnemonic: "LOGIN_SUCCESS" });
    expect(a.timestamp).toBeNull();
    const b = ok("<189>18: 00:01:02: %C4K_EBM-4-HOSTFLAPPING: Host flaps");
    expect(b.cisco?.facility).toBe("C4K_EBM");
    const c = ok("<187>5: %PLATFORM-ENV-1-FAN: Fan failure");
    expect(c.cisco).toEqual({ seq: 5, facility: "PLATFORM-ENV", severity: 1, mnemonic: "FAN" });
  });

  it("reads a Cisco line a relay put a BSD header in front of", () => {
    const m = ok("<189>Nov 24 09:00:05 10.1.1.1 88: *Nov 24 09:00:04.900 UTC: %LINK-3-UPDOWN: Interface Gi0/2, changed state to down");
    expect([m.format, m.hostname, m.timestamp, m.cisco?.seq]).toEqual(["cisco", "10.1.1.1", "2026-11-24T09:00:04.900Z", 88]);
  });
});

describe("failures", () => {
  it("reports empty input", () => {
    expect(fail("")).toEqual({ ok: false, reason: "empty", raw: null });
    expect(fail("\r\n\0")).toEqual({ ok: false, reason: "empty", raw: null });
  });

  it("refuses invalid PRIs", () => {
    for (const t of ["<192>x", "<>x", "<01>x", "<00>x", "<abc>x", "<1000>x", "no pri at all", "13>x", "<-1>x", "<1 >x"]) {
      const r = fail(t);
      expect([t, r.reason]).toEqual([t, "invalid_pri"]);
      expect(r.raw).toBe(t);
    }
    expect(ok("<191>x").severity).toBe(7);
    expect(ok("<0>x").facility).toBe(0);
  });

  it("reports a PRI cut short as truncated", () => {
    for (const t of ["<", "<13", "<13>", "<191"]) expect(fail(t).reason).toBe("truncated");
  });

  it("refuses binary: a NUL inside, or mostly control or undecodable bytes, and gives clean raw text", () => {
    const r = fail(Buffer.from("<13>abc\0def"));
    expect(r.reason).toBe("binary");
    expect(r.raw).toBe("<13>abc\\x00def");
    expect(fail(Buffer.from([0x3c, 0x31, 0x33, 0x3e, 1, 2, 3, 4, 5, 6, 7, 8, 0x41])).reason).toBe("binary");
    expect(fail(Buffer.from([0x3c, 0x31, 0x33, 0x3e, 0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0x80, 0x81])).reason).toBe("binary");
    // A little Latin-1 in a line is not binary: the byte becomes U+FFFD.
    const latin = ok(Buffer.concat([Buffer.from("<13>Nov 24 09:00:00 h app: temp"), Buffer.from([0xe9]), Buffer.from("rature high")]));
    expect(latin.message).toBe("temp\uFFFDrature high");
  });

  it("cleanText and rawText escape NULs and replace lone surrogates", () => {
    expect(cleanText("a\0b\uD800c\uDC00d\uD83D\uDE00")).toBe("a\\x00b\uFFFDc\uFFFDd\uD83D\uDE00");
    expect(cleanText("plain")).toBe("plain");
    expect(rawText(Buffer.from([0x61, 0, 0xed, 0xa0, 0x80, 0x62, 0x0d, 0x0a]))).toBe("a\\x00\uFFFD\uFFFD\uFFFDb");
    expect(rawText(Buffer.from("abcdef"), 3)).toBe("abc");
  });
});

describe("fuzz", () => {
  const valid = [
    `<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 [a@1 x="\\"y\\]"][b@2 z="1"] ${BOM}'su root' failed`,
    "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time",
    "<38>Nov 24 09:59:58 web01 sshd[1234]: Accepted publickey for root",
    "<189>123: router1: *Mar  1 18:46:11.123 UTC: %LINK-3-UPDOWN: Interface Gi0/1, changed state to up",
    "<134>2026-11-24T11:00:00.5+01:00 fw01 filterlog[555]: 5,,,1000,igb0,match,pass",
    '<13>grüße 🎉 [x] \\ "',
  ];

  it("every truncated prefix of valid messages parses without throwing and yields safe strings", () => {
    let count = 0;
    for (const v of valid) {
      const b = Buffer.from(v, "utf8");
      for (let len = 0; len <= b.length; len++) {
        assertSafe(parseSyslog(b.subarray(0, len), NOW));
        count++;
      }
    }
    expect(count).toBeGreaterThan(300);
  });

  it("random bytes, random printable text, mutations and oversized input never throw", () => {
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = Buffer.from('<>[]"\\=-: 0123456789TZ.+abcxyzJanNovMar*%\r\n\t\u00e9', "utf8");
    for (let k = 0; k < 3000; k++) {
      assertSafe(parseSyslog(randomBytes(rnd(300)), NOW));
      const t = Buffer.alloc(rnd(120));
      for (let i = 0; i < t.length; i++) t[i] = alphabet[rnd(alphabet.length)];
      assertSafe(parseSyslog(t, NOW));
      const v = Buffer.from(valid[rnd(valid.length)], "utf8");
      for (let m = 0; m < 3; m++) v[rnd(v.length)] = rnd(256);
      assertSafe(parseSyslog(v, NOW));
      const p = Buffer.concat([Buffer.from("<13>"), t]);
      assertSafe(parseSyslog(p, NOW));
    }
  });

  it("oversized and pathological input returns quickly", () => {
    const big = Buffer.from("<13>1 2026-11-24T10:00:00Z h a - - [" + 'x@1 a="'.repeat(20000) + "]", "utf8");
    const started = Date.now();
    assertSafe(parseSyslog(big, NOW));
    assertSafe(parseSyslog(Buffer.from("<13>" + "a".repeat(1_000_000)), NOW));
    assertSafe(parseSyslog(Buffer.from("<13>" + "[".repeat(100_000)), NOW));
    assertSafe(parseSyslog(Buffer.from("<13>" + "%A-1-".repeat(50_000) + ":"), NOW));
    assertSafe(parseSyslog(Buffer.from("<13>1 " + "2".repeat(100_000)), NOW));
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("strings from surrogate-heavy and invalid UTF-8 input are safe", () => {
    const evil = Buffer.from([0x3c, 0x31, 0x33, 0x3e, 0x61, 0xed, 0xa0, 0x80, 0x62, 0xf0, 0x9f, 0x98, 0x80, 0xf0, 0x9f, 0x98]);
    const r = parseSyslog(evil, NOW);
    assertSafe(r);
  });
});
