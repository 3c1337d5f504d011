import {
  compileFilter,
  FIELD_SPECS,
  FILTER_LIST_MAX,
  FILTER_MAX_CONDITIONS,
  FILTER_TEXT_MAX,
  FILTER_VALUE_MAX,
  FilterError,
  filterProblem,
  opsOf,
} from "../lib/filter.js";
import { FILTER_FIELDS, FILTER_OPS, type Filter, type FilterField, type FilterOp, type FilterSubject } from "../lib/types.js";

const NONE: FilterSubject = {
  kind: "syslog",
  source_ip: "192.0.2.10",
  pool: null,
  facility: null,
  severity: null,
  hostname: null,
  app_name: null,
  message: null,
  trap_oid: null,
  varbinds: null,
  src_addr: null,
  dst_addr: null,
  proto: null,
  src_port: null,
  dst_port: null,
  src_as: null,
  dst_as: null,
};
/** A syslog message from pool edge-1: <35> (auth.err) from Core-SW1, sshd. */
const S: FilterSubject = {
  ...NONE,
  pool: "edge-1",
  facility: 4,
  severity: 3,
  hostname: "Core-SW1",
  app_name: "sshd",
  message: "Failed password for root from 198.51.100.7",
};
/** A linkDown trap from an IPv6 agent, with no pool (a null field: the tee always sets one). */
const T: FilterSubject = {
  ...NONE,
  kind: "trap",
  source_ip: "2001:db8::5",
  trap_oid: "1.3.6.1.6.3.1.1.5.3",
  varbinds: ["1.3.6.1.2.1.2.2.1.1.3=3", "1.3.6.1.2.1.2.2.1.2.3=GigabitEthernet0/3"],
};
/** A TCP flow 10.1.2.3:51515 → 203.0.113.9:443 between two AS. */
const F: FilterSubject = {
  ...NONE,
  kind: "flow",
  source_ip: "10.0.0.1",
  pool: "edge-1",
  src_addr: "10.1.2.3",
  dst_addr: "203.0.113.9",
  proto: 6,
  src_port: 51515,
  dst_port: 443,
  src_as: 64512,
  dst_as: 4200000000,
};
const w = (base: FilterSubject, patch: Partial<FilterSubject>): FilterSubject => ({ ...base, ...patch });

/** [field, op, value, a subject it passes, a subject it does not]. Every operator each field takes, no other. */
const VALID: [FilterField, FilterOp, string, FilterSubject, FilterSubject][] = [
  ["source_ip", "eq", "192.0.2.10", S, w(S, { source_ip: "192.0.2.11" })],
  ["source_ip", "ne", "2001:DB8:0:0::5", S, T],
  ["source_ip", "in_list", "10.9.9.9, 192.0.2.10", S, F],
  ["source_ip", "in_cidr", "192.0.2.0/24, 2001:db8::/32", T, F],
  ["source_ip", "not_in_cidr", "10.0.0.0/8", S, F],
  ["pool", "eq", "edge-1", S, w(S, { pool: "edge-2" })],
  ["pool", "ne", "edge-2", S, w(S, { pool: "edge-2" })],
  ["pool", "in_list", "core, edge-1", S, w(S, { pool: "Edge-1" })],
  ["pool", "contains", "dge", S, w(S, { pool: "core" })],
  ["pool", "not_contains", "core", S, w(S, { pool: "core-2" })],
  ["pool", "prefix", "edge", S, w(S, { pool: "core" })],
  ["pool", "regex", "^edge-[0-9]+$", S, w(S, { pool: "edge-x" })],
  ["pool", "not_regex", "^core", S, w(S, { pool: "core" })],
  ["kind", "eq", "trap", T, S],
  ["kind", "ne", "trap", S, T],
  ["kind", "in_list", "syslog, flow", F, T],
  ["facility", "eq", "4", S, w(S, { facility: 5 })],
  ["facility", "ne", "5", S, w(S, { facility: 5 })],
  ["facility", "in_list", "4,23", S, w(S, { facility: 0 })],
  ["facility", "lte", "4", S, w(S, { facility: 5 })],
  ["facility", "gte", "4", S, w(S, { facility: 3 })],
  ["severity", "eq", "3", S, w(S, { severity: 4 })],
  ["severity", "ne", "7", S, w(S, { severity: 7 })],
  ["severity", "in_list", "0, 1, 2, 3", S, w(S, { severity: 6 })],
  ["severity", "lte", "3", S, w(S, { severity: 4 })],
  ["severity", "gte", "0", S, NONE],
  ["hostname", "eq", "core-sw1", S, w(S, { hostname: "core-sw10" })],
  ["hostname", "ne", "CORE-SW2", S, w(S, { hostname: "core-sw2" })],
  ["hostname", "in_list", "edge-1, CORE-sw1", S, w(S, { hostname: "core" })],
  ["hostname", "contains", "SW", S, w(S, { hostname: "router" })],
  ["hostname", "not_contains", "edge", S, w(S, { hostname: "Edge-7" })],
  ["hostname", "prefix", "core-", S, w(S, { hostname: "xcore-sw1" })],
  ["hostname", "regex", "^Core-SW[0-9]$", S, w(S, { hostname: "core-sw1" })],
  ["hostname", "not_regex", "^edge", S, w(S, { hostname: "edge-1" })],
  ["app_name", "eq", "SSHD", S, w(S, { app_name: "sshd2" })],
  ["app_name", "ne", "cron", S, w(S, { app_name: "CRON" })],
  ["app_name", "in_list", "cron,sshd", S, w(S, { app_name: "kernel" })],
  ["app_name", "contains", "ssh", S, w(S, { app_name: "cron" })],
  ["app_name", "not_contains", "cron", S, w(S, { app_name: "anacron" })],
  ["app_name", "prefix", "ss", S, w(S, { app_name: "xssh" })],
  ["app_name", "regex", "^s+hd$", S, w(S, { app_name: "SSHD" })],
  ["app_name", "not_regex", "cron", S, w(S, { app_name: "cron" })],
  ["message", "eq", "failed password for ROOT from 198.51.100.7", S, w(S, { message: "Failed password" })],
  ["message", "ne", "link up", S, w(S, { message: "Link Up" })],
  ["message", "in_list", "a, failed password for root from 198.51.100.7", S, w(S, { message: "b" })],
  ["message", "contains", "FAILED PASSWORD", S, w(S, { message: "Accepted password" })],
  ["message", "not_contains", "accepted", S, w(S, { message: "Accepted password" })],
  ["message", "prefix", "failed", S, w(S, { message: "Password failed" })],
  ["message", "regex", "from [0-9.]+$", S, w(S, { message: "from host" })],
  ["message", "not_regex", "^Accepted", S, w(S, { message: "Accepted key" })],
  ["trap_oid", "eq", ".1.3.6.1.6.3.1.1.5.3", T, w(T, { trap_oid: "1.3.6.1.6.3.1.1.5.4" })],
  ["trap_oid", "ne", "1.3.6.1.6.3.1.1.5.4", T, w(T, { trap_oid: "1.3.6.1.6.3.1.1.5.4" })],
  ["trap_oid", "in_list", "1.3.6.1.6.3.1.1.5.4, 1.3.6.1.6.3.1.1.5.3", T, w(T, { trap_oid: "1.3.6.1.6.3.1.1.5.1" })],
  ["trap_oid", "prefix", "1.3.6.1.6.3.1.1.5", T, w(T, { trap_oid: "1.3.6.1.6.3.1.1.50" })],
  ["trap_oid", "regex", "\\.5\\.3$", T, w(T, { trap_oid: "1.3.6.1.6.3.1.1.5.4" })],
  ["trap_oid", "not_regex", "^1\\.3\\.6\\.1\\.4\\.1\\.", T, w(T, { trap_oid: "1.3.6.1.4.1.9.9.41.2" })],
  ["varbind", "eq", "1.3.6.1.2.1.2.2.1.2.3=gigabitethernet0/3", T, w(T, { varbinds: ["1.3.6.1.2.1.2.2.1.2.3=Gi0/3"] })],
  ["varbind", "ne", "1.3.6.1.2.1.2.2.1.1.3=3", w(T, { varbinds: ["1.3.6.1.2.1.2.2.1.1.3=4"] }), T],
  ["varbind", "contains", "gigabit", T, w(T, { varbinds: [] })],
  ["varbind", "not_contains", "FastEthernet", T, w(T, { varbinds: ["1.3.6.1.2.1.2.2.1.2.3=FastEthernet0/1", "1.3.6.1.2.1.2.2.1.1.3=3"] })],
  ["varbind", "prefix", "1.3.6.1.2.1.2.2.1.1.", T, w(T, { varbinds: ["1.3.6.1.2.1.2.2.1.2.3=x"] })],
  ["varbind", "regex", "=GigabitEthernet[0-9]+/[0-9]+$", T, w(T, { varbinds: ["1.3.6.1.2.1.2.2.1.2.3=gigabitethernet0/3"] })],
  ["varbind", "not_regex", "=Fast", T, w(T, { varbinds: ["1.3.6.1.2.1.2.2.1.2.3=FastEthernet0/1"] })],
  ["src_addr", "eq", "10.1.2.3", F, w(F, { src_addr: "10.1.2.4" })],
  ["src_addr", "ne", "10.1.2.4", F, w(F, { src_addr: "10.1.2.4" })],
  ["src_addr", "in_list", "10.1.2.3,2001:db8::1", F, w(F, { src_addr: "::ffff:10.1.2.3" })],
  ["src_addr", "in_cidr", "10.0.0.0/8", F, w(F, { src_addr: "::ffff:10.1.2.3" })],
  ["src_addr", "not_in_cidr", "192.168.0.0/16, fc00::/7", F, w(F, { src_addr: "fd00::1" })],
  ["dst_addr", "eq", "203.0.113.9", F, w(F, { dst_addr: "203.0.113.90" })],
  ["dst_addr", "ne", "203.0.113.90", F, w(F, { dst_addr: "203.0.113.90" })],
  ["dst_addr", "in_list", "203.0.113.9", F, w(F, { dst_addr: "203.0.113.10" })],
  ["dst_addr", "in_cidr", "203.0.113.8/29", F, w(F, { dst_addr: "203.0.113.16" })],
  ["dst_addr", "not_in_cidr", "203.0.113.16/28", F, w(F, { dst_addr: "203.0.113.31" })],
  ["proto", "eq", "6", F, w(F, { proto: 17 })],
  ["proto", "ne", "17", F, w(F, { proto: 17 })],
  ["proto", "in_list", "6, 17", F, w(F, { proto: 1 })],
  ["proto", "lte", "6", F, w(F, { proto: 17 })],
  ["proto", "gte", "6", F, w(F, { proto: 1 })],
  ["src_port", "eq", "51515", F, w(F, { src_port: 51516 })],
  ["src_port", "ne", "0", F, w(F, { src_port: 0 })],
  ["src_port", "in_list", "65535,51515", F, w(F, { src_port: 1 })],
  ["src_port", "lte", "65535", F, NONE],
  ["src_port", "gte", "1024", F, w(F, { src_port: 1023 })],
  ["dst_port", "eq", "443", F, w(F, { dst_port: 80 })],
  ["dst_port", "ne", "80", F, w(F, { dst_port: 80 })],
  ["dst_port", "in_list", "80,443", F, w(F, { dst_port: 8443 })],
  ["dst_port", "lte", "1023", F, w(F, { dst_port: 1024 })],
  ["dst_port", "gte", "443", F, w(F, { dst_port: 442 })],
  ["src_as", "eq", "64512", F, w(F, { src_as: 64513 })],
  ["src_as", "ne", "0", F, w(F, { src_as: 0 })],
  ["src_as", "in_list", "64512,64513", F, w(F, { src_as: 1 })],
  ["src_as", "lte", "65535", F, w(F, { src_as: 65536 })],
  ["src_as", "gte", "64512", F, w(F, { src_as: 64511 })],
  ["dst_as", "eq", "4200000000", F, w(F, { dst_as: 4200000001 })],
  ["dst_as", "ne", "4294967295", F, w(F, { dst_as: 4294967295 })],
  ["dst_as", "in_list", "4200000000, 15169", F, w(F, { dst_as: 15170 })],
  ["dst_as", "lte", "4294967295", F, NONE],
  ["dst_as", "gte", "4200000000", F, w(F, { dst_as: 65535 })],
];

const one = (field: string, op: string, value: unknown, mode: "all" | "any" = "all") => compileFilter({ mode, conditions: [{ field, op, value }] } as Filter);
const refusal = (filter: unknown): string => {
  try {
    compileFilter(filter as Filter);
  } catch (err) {
    expect(err).toBeInstanceOf(FilterError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(filter).slice(0, 200)}`);
};

describe("every field × operator", () => {
  test("the table holds exactly the operators each field takes, and the spec's 17 fields and 12 operators", () => {
    expect(FILTER_FIELDS).toHaveLength(17);
    expect(FILTER_OPS).toHaveLength(12);
    for (const field of FILTER_FIELDS) {
      const ops = VALID.filter(([f]) => f === field).map(([, op]) => op);
      expect({ field, ops: [...ops].sort() }).toEqual({ field, ops: [...opsOf(field)].sort() });
    }
    // Every operator is valid on some field.
    expect(new Set(VALID.map(([, op]) => op))).toEqual(new Set(FILTER_OPS));
  });

  test.each(VALID)("%s %s %j passes one subject and not the other", (field, op, value, pass, miss) => {
    const f = one(field, op, value);
    expect(f(pass)).toBe(true);
    expect(f(miss)).toBe(false);
  });

  test.each(VALID.filter(([field]) => field !== "kind" && field !== "source_ip"))(
    "%s %s %j: a record without the field matches no condition",
    (field, op, value, pass) => {
      const f = one(field, op, value);
      expect(f(field === "varbind" ? w(pass, { varbinds: null }) : w(pass, { [field]: null }))).toBe(false);
    },
  );

  const REFUSED: [FilterField, FilterOp][] = FILTER_FIELDS.flatMap((field) =>
    FILTER_OPS.filter((op) => !opsOf(field).includes(op)).map((op) => [field, op] as [FilterField, FilterOp]),
  );

  test.each(REFUSED)("%s %s is refused: the pairing makes no sense", (field, op) => {
    expect(refusal({ mode: "all", conditions: [{ field, op, value: "1" }] })).toMatch(
      new RegExp(`^conditions\\[0\\]: ${op} does not apply to ${field} \\(it takes `),
    );
  });

  test("the refused pairings are what is left: 17 × 12 in all", () => {
    expect(VALID.length + REFUSED.length).toBe(17 * 12);
    expect(REFUSED).toContainEqual(["message", "in_cidr"]);
    expect(REFUSED).toContainEqual(["hostname", "lte"]);
    expect(REFUSED).toContainEqual(["proto", "regex"]);
  });
});

/** [field, op, value, what the message says]. */
const BAD_VALUES: [FilterField, FilterOp, string, RegExp][] = [
  ["source_ip", "eq", "192.0.2.300", /is not an IP address/],
  ["source_ip", "eq", "10.1", /is not an IP address/],
  ["source_ip", "eq", "fe80::1%eth0", /is not an IP address/],
  ["source_ip", "in_list", "10.0.0.1,,10.0.0.2", /empty item/],
  ["src_addr", "in_cidr", "10.0.0.0/33", /is not an IP prefix/],
  ["src_addr", "in_cidr", "10.0.0/24", /is not an IP prefix/],
  ["dst_addr", "not_in_cidr", "10.0.0.0/8,", /empty item/],
  ["dst_addr", "in_cidr", "2001:db8::/129", /is not an IP prefix/],
  ["facility", "eq", "24", /facility takes an integer from 0 to 23/],
  ["facility", "eq", "-1", /from 0 to 23/],
  ["facility", "lte", "4.0", /from 0 to 23/],
  ["facility", "gte", "", /from 0 to 23/],
  ["severity", "lte", "8", /severity takes an integer from 0 to 7/],
  ["severity", "eq", "err", /from 0 to 7/],
  ["proto", "gte", "256", /proto takes an integer from 0 to 255/],
  ["src_port", "eq", "65536", /src_port takes an integer from 0 to 65535/],
  ["dst_port", "in_list", "80,99999", /dst_port takes an integer from 0 to 65535/],
  ["src_as", "eq", "4294967296", /src_as takes an integer from 0 to 4294967295/],
  ["dst_as", "gte", "1e3", /from 0 to 4294967295/],
  ["dst_as", "eq", "0x10", /from 0 to 4294967295/],
  ["kind", "eq", "netflow", /kind takes syslog, trap, flow/],
  ["kind", "in_list", "syslog,foo", /kind takes/],
  ["pool", "eq", "bad pool!", /is not a pool name/],
  ["pool", "in_list", "a,b c", /is not a pool name/],
  ["pool", "eq", "x".repeat(64), /is not a pool name/],
  ["pool", "contains", "", /needs a non-empty value/],
  ["hostname", "regex", "(a+)+$", /the regex the pattern may take catastrophic time/],
  ["message", "regex", "([", /the regex does not compile/],
  ["app_name", "regex", "(?i)ssh", /inline flags/],
  ["message", "not_regex", ".*a.*b", /catastrophic/],
  ["message", "contains", "", /needs a non-empty value/],
  ["hostname", "regex", "", /needs a non-empty pattern/],
  ["trap_oid", "eq", "1.3.x", /is not a dotted OID/],
  ["trap_oid", "prefix", "iso.3.6", /is not a dotted OID/],
  ["trap_oid", "in_list", "1.3,,1.4", /empty item/],
  ["trap_oid", "regex", "(a|a)*", /catastrophic/],
  ["varbind", "regex", "(.*a){20}", /catastrophic/],
  ["varbind", "eq", "", /needs a non-empty value/],
];

describe("values that do not parse for their field", () => {
  test.each(BAD_VALUES)("%s %s %j is refused", (field, op, value, reason) => {
    expect(refusal({ mode: "all", conditions: [{ field, op, value }] })).toMatch(reason);
  });

  test("integer ranges are each field's", () => {
    expect(Object.fromEntries(FILTER_FIELDS.filter((f) => FIELD_SPECS[f].range).map((f) => [f, FIELD_SPECS[f].range]))).toEqual({
      facility: [0, 23],
      severity: [0, 7],
      proto: [0, 255],
      src_port: [0, 65535],
      dst_port: [0, 65535],
      src_as: [0, 4294967295],
      dst_as: [0, 4294967295],
    });
    for (const [field, max] of [
      ["facility", 23],
      ["severity", 7],
      ["proto", 255],
      ["src_port", 65535],
      ["dst_as", 4294967295],
    ] as const) {
      expect(() => one(field, "eq", String(max))).not.toThrow();
      expect(() => one(field, "eq", "0")).not.toThrow();
      expect(() => one(field, "eq", String(max + 1))).toThrow(FilterError);
    }
  });

  test("an in_list holds at most 256 items, none empty, blanks trimmed", () => {
    const items = Array.from({ length: FILTER_LIST_MAX }, (_, i) => String(i));
    expect(one("dst_port", "in_list", items.join(","))(w(F, { dst_port: 255 }))).toBe(true);
    expect(refusal({ conditions: [{ field: "dst_port", op: "in_list", value: [...items, "256"].join(",") }] })).toMatch(/more than 256 items/);
    expect(refusal({ conditions: [{ field: "hostname", op: "in_list", value: "a, ,b" }] })).toMatch(/empty item/);
    expect(one("hostname", "in_list", "  core-sw1  ,x")(S)).toBe(true);
  });

  test("the filter's shape: mode, conditions, field, op, value and the caps", () => {
    expect(refusal({ mode: "some", conditions: [] })).toBe("mode must be all or any");
    expect(refusal({ mode: "all", conditions: {} })).toBe("conditions is an array");
    expect(refusal([])).toBe("filter is an object {mode, conditions}");
    expect(refusal({ conditions: [null] })).toMatch(/^conditions\[0\]: a condition is an object/);
    expect(refusal({ conditions: [{ field: "sourceip", op: "eq", value: "x" }] })).toMatch(/^conditions\[0\]: field must be one of source_ip, pool,/);
    expect(refusal({ conditions: [{ field: "message", op: "like", value: "x" }] })).toMatch(/^conditions\[0\]: op must be one of eq, ne,/);
    expect(refusal({ conditions: [{ field: "facility", op: "eq", value: 4 }] })).toBe("conditions[0]: value is a string");
    expect(refusal({ conditions: [{ field: "message", op: "contains", value: "x".repeat(FILTER_VALUE_MAX + 1) }] })).toMatch(/longer than 4096/);
    const many = Array.from({ length: FILTER_MAX_CONDITIONS + 1 }, () => ({ field: "severity", op: "lte", value: "7" }));
    expect(refusal({ mode: "all", conditions: many })).toBe("a filter has at most 32 conditions");
    expect(() => compileFilter({ mode: "all", conditions: many.slice(1) } as Filter)).not.toThrow();
    expect(
      refusal({
        conditions: [
          { field: "severity", op: "lte", value: "7" },
          { field: "severity", op: "lte", value: "9" },
        ],
      }),
    ).toMatch(/^conditions\[1\]: /);
  });

  test("filterProblem answers null or the reason", () => {
    expect(filterProblem({ mode: "any", conditions: [] })).toBeNull();
    expect(filterProblem(null)).toBeNull();
    expect(filterProblem({ conditions: [{ field: "message", op: "in_cidr", value: "10.0.0.0/8" }] })).toMatch(/in_cidr does not apply to message/);
  });
});

describe("evaluation", () => {
  const cond = (field: FilterField, op: FilterOp, value: string) => ({ field, op, value });

  test("no filter, no conditions: everything passes, in either mode", () => {
    for (const f of [
      compileFilter(null),
      compileFilter(undefined),
      compileFilter({ mode: "all", conditions: [] }),
      compileFilter({ mode: "any", conditions: [] }),
    ])
      for (const s of [S, T, F, NONE]) expect(f(s)).toBe(true);
  });

  test("mode all needs every condition, any needs one; mode defaults to all", () => {
    const conditions = [cond("kind", "eq", "syslog"), cond("severity", "lte", "3")];
    const all = compileFilter({ mode: "all", conditions });
    const any = compileFilter({ mode: "any", conditions });
    const dflt = compileFilter({ conditions } as Filter);
    expect([all(S), all(w(S, { severity: 6 })), all(T)]).toEqual([true, false, false]);
    expect([any(S), any(w(S, { severity: 6 })), any(T), any(w(T, { severity: 0 }))]).toEqual([true, true, false, true]);
    expect([dflt(S), dflt(w(S, { severity: 6 }))]).toEqual([true, false]);
  });

  test("a syslog-only filter on a mixed stream: errors from edge pools, except cron", () => {
    const f = compileFilter({
      mode: "all",
      conditions: [cond("kind", "eq", "syslog"), cond("pool", "prefix", "edge"), cond("severity", "lte", "3"), cond("app_name", "ne", "cron")],
    });
    expect([f(S), f(w(S, { app_name: "CRON" })), f(w(S, { pool: null })), f(T), f(F)]).toEqual([true, false, false, false, false]);
  });

  test("text operators see the first 8192 characters; regexes too", () => {
    const long = w(S, { message: "a".repeat(FILTER_TEXT_MAX) + "NEEDLE" });
    expect(one("message", "contains", "needle")(long)).toBe(false);
    expect(one("message", "regex", "NEEDLE")(long)).toBe(false);
    expect(one("message", "not_regex", "NEEDLE")(long)).toBe(true);
    const early = w(S, { message: "NEEDLE" + "a".repeat(FILTER_TEXT_MAX) });
    expect(one("message", "contains", "needle")(early)).toBe(true);
    expect(one("message", "regex", "^NEEDLE")(early)).toBe(true);
  });

  test("addresses compare by value, not text; families never mix", () => {
    expect(one("source_ip", "eq", "2001:db8:0:0:0:0:0:5")(T)).toBe(true);
    expect(one("source_ip", "eq", "2001:db8::5")(w(T, { source_ip: "2001:DB8::5" }))).toBe(true);
    expect(one("source_ip", "in_cidr", "0.0.0.0/0")(T)).toBe(false);
    expect(one("source_ip", "in_cidr", "::/0")(S)).toBe(false);
    expect(one("source_ip", "in_cidr", "::/0")(T)).toBe(true);
    // An IPv4-mapped IPv6 address stays IPv6 (docs/adr/0007).
    expect(one("src_addr", "in_cidr", "10.0.0.0/8")(w(F, { src_addr: "::ffff:10.1.2.3" }))).toBe(false);
    expect(one("src_addr", "in_cidr", "::ffff:0:0/96")(w(F, { src_addr: "::ffff:10.1.2.3" }))).toBe(true);
    // Host bits set name the network that holds them; a bare address is one host.
    expect(one("dst_addr", "in_cidr", "203.0.113.77/24")(F)).toBe(true);
    expect(one("dst_addr", "in_cidr", "203.0.113.9")(F)).toBe(true);
    expect(one("dst_addr", "in_cidr", "203.0.113.8")(F)).toBe(false);
    expect(one("dst_addr", "in_cidr", "128.0.0.0/1")(w(F, { dst_addr: "255.255.255.255" }))).toBe(true);
    expect(one("dst_addr", "not_in_cidr", "128.0.0.0/1")(w(F, { dst_addr: "127.255.255.255" }))).toBe(true);
    // A subject address that does not parse matches nothing positive.
    expect(one("src_addr", "in_cidr", "0.0.0.0/0")(w(F, { src_addr: "not-an-ip" }))).toBe(false);
  });

  test("a subject address is read strictly: a malformed one matches no prefix, a well-formed one its own", () => {
    const any4 = one("source_ip", "in_cidr", "0.0.0.0/0");
    const notAny4 = one("source_ip", "not_in_cidr", "0.0.0.0/0");
    for (const bad of [
      "1.2.3.4.5",
      "1..2.3",
      "01.2.3.4",
      "256.1.1.1",
      "1.2.3.",
      ".1.2.3",
      "1.2.3.4 ",
      "1.2.3",
      "1.2.3.1000",
      "a.b.c.d",
      "",
      "::ffff:1.2.3.4x",
    ]) {
      expect({ bad, in: any4(w(S, { source_ip: bad })), notIn: notAny4(w(S, { source_ip: bad })) }).toEqual({ bad, in: false, notIn: true });
    }
    for (const [ip, inside] of [
      ["0.0.0.0", "0.0.0.0/32"],
      ["255.255.255.255", "255.255.255.255/32"],
      ["10.0.0.1", "10.0.0.0/31"],
      ["172.16.254.3", "172.16.0.0/12"],
      ["2001:db8::1", "2001:db8::/127"],
    ]) {
      expect(one("source_ip", "in_cidr", inside)(w(S, { source_ip: ip }))).toBe(true);
      expect(one("source_ip", "eq", ip)(w(S, { source_ip: ip }))).toBe(true);
    }
    expect(one("source_ip", "in_cidr", "172.16.0.0/12")(w(S, { source_ip: "172.32.0.1" }))).toBe(false);
  });

  test("numbers compare as numbers: 007 is 7, 10 is above 9", () => {
    expect(one("severity", "eq", "007")(w(S, { severity: 7 }))).toBe(true);
    expect(one("dst_port", "gte", "9")(w(F, { dst_port: 10 }))).toBe(true);
    expect(one("dst_port", "lte", "9")(w(F, { dst_port: 10 }))).toBe(false);
    expect(one("src_as", "in_list", "01,2")(w(F, { src_as: 1 }))).toBe(true);
  });

  test("negative operators on varbinds: none of them matches; a trap without varbinds passes them", () => {
    const none = w(T, { varbinds: [] });
    expect(one("varbind", "not_contains", "x")(none)).toBe(true);
    expect(one("varbind", "contains", "=")(none)).toBe(false);
    expect(one("varbind", "ne", "1.3.6.1.2.1.2.2.1.1.3=3")(T)).toBe(false);
    expect(one("varbind", "not_regex", "=3$")(T)).toBe(false);
    expect(one("varbind", "not_regex", "=4$")(T)).toBe(true);
  });

  test("OID prefixes are whole arcs; a leading dot on either side is the same OID", () => {
    const f = one("trap_oid", "prefix", ".1.3.6.1.4.1.9");
    expect(f(w(T, { trap_oid: "1.3.6.1.4.1.9" }))).toBe(true);
    expect(f(w(T, { trap_oid: "1.3.6.1.4.1.9.9.41.2.0.1" }))).toBe(true);
    expect(f(w(T, { trap_oid: ".1.3.6.1.4.1.9.9.41.2.0.1" }))).toBe(true);
    expect(f(w(T, { trap_oid: "1.3.6.1.4.1.99" }))).toBe(false);
    expect(one("trap_oid", "eq", "1.3.6.1.6.3.1.1.5.3")(w(T, { trap_oid: ".1.3.6.1.6.3.1.1.5.3" }))).toBe(true);
  });

  test("pool names and kinds compare exactly; a null pool, like any null field, matches no pool condition", () => {
    expect(one("pool", "eq", "edge-1")(w(S, { pool: "EDGE-1" }))).toBe(false);
    expect(one("pool", "ne", "edge-1")(w(S, { pool: null }))).toBe(false);
    expect(one("pool", "not_regex", "x")(w(S, { pool: null }))).toBe(false);
  });
});
