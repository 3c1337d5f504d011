import { generateKeyPairSync } from "node:crypto";
import { ApiError } from "../../../core/index.js";
import { selfSignedCert, type SelfSignedCert } from "../../../test/support/httpTarget.js";
import { DEST_KINDS, SOURCE_KINDS, type DestKind, type SourceKind } from "../lib/types.js";
import {
  checkCaCert,
  checkCommunity,
  checkFilter,
  checkKindPair,
  checkPool,
  checkRateLimit,
  checkServiceAccount,
  isHostname,
  KIND_SOURCES,
  parseTarget,
} from "../lib/validate.js";

/** The error a check throws: its status, code and message. */
function refusal(fn: () => unknown): { status: number; code: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    return { status: e.status, code: e.code, message: e.message };
  }
  throw new Error("accepted");
}
const code = (fn: () => unknown) => refusal(fn).code;

let tls: SelfSignedCert;
let tls2: SelfSignedCert;
const rsaKey = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
}).privateKey;
const ecKey = generateKeyPairSync("ec", {
  namedCurve: "prime256v1",
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
}).privateKey;

beforeAll(() => {
  tls = selfSignedCert();
  tls2 = selfSignedCert();
});

describe("target (invalid_target)", () => {
  test.each([
    ["collector.example.net:514", "collector.example.net", 514],
    ["localhost:1", "localhost", 1],
    ["127.0.0.1:65535", "127.0.0.1", 65535],
    ["[2001:db8::1]:6514", "2001:db8::1", 6514],
    ["[::1]:162", "::1", 162],
    ["[::ffff:10.0.0.1]:2055", "::ffff:10.0.0.1", 2055],
    ["a-b.c1.example:00514", "a-b.c1.example", 514],
    ["1password.example:443", "1password.example", 443],
  ])("%s is host %s port %d", (target, host, port) => {
    expect(parseTarget(target)).toEqual({ host, port });
  });

  test.each([
    ["", "the port is missing"],
    ["collector.example.net", "the port is missing"],
    ["collector.example.net:", "the port must be 1 to 65535"],
    ["collector.example.net:0", "the port must be 1 to 65535"],
    ["collector.example.net:65536", "the port must be 1 to 65535"],
    ["collector.example.net:514x", "the port must be 1 to 65535"],
    ["collector.example.net:-1", "the port must be 1 to 65535"],
    ["collector.example.net:+514", "the port must be 1 to 65535"],
    ["collector.example.net:123456", "the port must be 1 to 65535"],
    [":514", "the host must be a hostname or an IPv4 address"],
    ["-bad.example:514", "the host must be a hostname or an IPv4 address"],
    ["bad-.example:514", "the host must be a hostname or an IPv4 address"],
    ["under_score.example:514", "the host must be a hostname or an IPv4 address"],
    ["a..b:514", "the host must be a hostname or an IPv4 address"],
    ["trailing.dot.:514", "the host must be a hostname or an IPv4 address"],
    [`${"a".repeat(64)}.example:514`, "the host must be a hostname or an IPv4 address"],
    [`${Array.from({ length: 64 }, () => "abc").join(".")}:514`, "the host must be a hostname or an IPv4 address"],
    ["300.1.1.1:514", "the host must be a hostname or an IPv4 address"],
    ["10.1:514", "the host must be a hostname or an IPv4 address"],
    ["010.0.0.1:514", "the host must be a hostname or an IPv4 address"],
    ["host name:514", "the host must be a hostname or an IPv4 address"],
    ["user@host:514", "the host must be a hostname or an IPv4 address"],
    ["2001:db8::1:514", "an IPv6 address goes in brackets"],
    ["[2001:db8::1]514", "an IPv6 address in brackets, then :port"],
    ["[2001:db8::1", "an IPv6 address in brackets, then :port"],
    ["[10.0.0.1]:514", "the bracketed host must be an IPv6 address without a zone"],
    ["[fe80::1%eth0]:514", "the bracketed host must be an IPv6 address without a zone"],
    ["[example.net]:514", "the bracketed host must be an IPv6 address without a zone"],
    ["[2001:db8::1]:0", "the port must be 1 to 65535"],
  ])("%j is refused: %s", (target, why) => {
    const r = refusal(() => parseTarget(target));
    expect(r).toEqual({ status: 400, code: "invalid_target", message: expect.stringContaining(why) });
  });

  test("hostnames per RFC 1123: labels up to 63, names up to 253, digits may lead, all-numeric is not a name", () => {
    expect(isHostname(`${"a".repeat(63)}.example`)).toBe(true);
    expect(isHostname(Array.from({ length: 63 }, () => "abc").join(".") + ".a")).toBe(true); // 253 characters
    expect(isHostname(Array.from({ length: 63 }, () => "abc").join(".") + ".ab")).toBe(false); // 254
    expect(isHostname("3com.example")).toBe(true);
    expect(isHostname("1.2.3")).toBe(false);
  });
});

describe("kind pairing (kind_mismatch)", () => {
  const PAIRS: [DestKind, SourceKind][] = DEST_KINDS.flatMap((d) => SOURCE_KINDS.map((s) => [d, s] as [DestKind, SourceKind]));
  const FITS = new Set([
    "syslog_udp/syslog",
    "syslog_tcp/syslog",
    "syslog_tls/syslog",
    "snmp_trap_udp/trap",
    "flow_udp/flow",
    "warehouse/syslog",
    "warehouse/trap",
    "warehouse/flow",
  ]);

  test.each(PAIRS)("%s ← %s", (dest, source) => {
    if (FITS.has(`${dest}/${source}`)) expect(() => checkKindPair(dest, source)).not.toThrow();
    else expect(refusal(() => checkKindPair(dest, source))).toEqual({ status: 400, code: "kind_mismatch", message: expect.stringContaining(`not ${source}`) });
  });

  test("the pairing table is the spec's", () => {
    expect(KIND_SOURCES).toEqual({
      syslog_udp: ["syslog"],
      syslog_tcp: ["syslog"],
      syslog_tls: ["syslog"],
      snmp_trap_udp: ["trap"],
      flow_udp: ["flow"],
      warehouse: ["syslog", "trap", "flow"],
    });
  });
});

describe("pool (invalid_pool), rate limit (invalid_rate_limit)", () => {
  test("pool names: 1 to 63 letters, digits, _ and -; null and omitted are every pool", () => {
    for (const ok of [null, undefined, "default", "edge_1-B", "x".repeat(63)]) expect(() => checkPool(ok)).not.toThrow();
    for (const bad of ["", "x".repeat(64), "edge 1", "edge.1", "pôle", "a/b"]) expect(code(() => checkPool(bad))).toBe("invalid_pool");
  });

  test("rate_limit_per_sec: null or an integer from 1 to 2147483647", () => {
    for (const ok of [null, undefined, 1, 1000, 2147483647]) expect(() => checkRateLimit(ok)).not.toThrow();
    for (const bad of [0, -1, 1.5, 2147483648, Number.NaN, Number.POSITIVE_INFINITY]) expect(code(() => checkRateLimit(bad))).toBe("invalid_rate_limit");
  });
});

describe("ca_cert (invalid_ca_cert)", () => {
  test("one or more PEM certificates, comments between them allowed, kept as given", () => {
    expect(checkCaCert(tls.cert, "syslog_tls")).toBe(tls.cert);
    const bundle = `# first\n${tls.cert}\nsubject=CN=localhost\n${tls2.cert}`;
    expect(checkCaCert(bundle, "warehouse")).toBe(bundle);
  });

  test("empty, blank or null clears it; on any kind", () => {
    for (const kind of DEST_KINDS) {
      expect(checkCaCert("", kind)).toBeNull();
      expect(checkCaCert("  \n", kind)).toBeNull();
      expect(checkCaCert(null, kind)).toBeNull();
      expect(checkCaCert(undefined, kind)).toBeNull();
    }
  });

  test.each([
    ["not PEM at all", () => "hello", "must be PEM certificates"],
    ["a private key", () => tls.key, "not a CERTIFICATE"],
    ["a certificate and its key", () => tls.cert + tls.key, "not a CERTIFICATE"],
    ["a certificate without END", () => tls.cert.replace("-----END CERTIFICATE-----", ""), "without its END line"],
    ["two BEGINs, one END", () => tls.cert.replace("-----END CERTIFICATE-----", "") + tls2.cert, "without its END line"],
    ["a damaged body", () => tls.cert.replace(/\n[A-Za-z0-9+/]{20}/, "\nAAAAAAAAAAAAAAAAAAAA"), "does not parse as X.509"],
    ["an empty block", () => "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", "does not parse as X.509"],
    ["a second certificate that is damaged", () => tls.cert + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate 2 does not parse"],
  ])("%s is refused", (_name, value, why) => {
    expect(refusal(() => checkCaCert(value(), "syslog_tls"))).toEqual({ status: 400, code: "invalid_ca_cert", message: expect.stringContaining(why) });
  });

  test("at most 100 certificates", () => {
    expect(() => checkCaCert(tls.cert.repeat(100), "syslog_tls")).not.toThrow();
    expect(refusal(() => checkCaCert(tls.cert.repeat(101), "syslog_tls")).message).toContain("more than 100 certificates");
  });

  test("only on the TLS kinds (syslog_tls, warehouse)", () => {
    for (const kind of ["syslog_udp", "syslog_tcp", "snmp_trap_udp", "flow_udp"] as const)
      expect(refusal(() => checkCaCert(tls.cert, kind))).toEqual({
        status: 400,
        code: "invalid_ca_cert",
        message: expect.stringContaining("syslog_tls and warehouse"),
      });
  });
});

describe("community (community_not_allowed)", () => {
  test("only on snmp_trap_udp; null or omitted anywhere", () => {
    expect(() => checkCommunity("s3cret-community", "snmp_trap_udp")).not.toThrow();
    for (const kind of DEST_KINDS) {
      expect(() => checkCommunity(null, kind)).not.toThrow();
      expect(() => checkCommunity(undefined, kind)).not.toThrow();
      if (kind !== "snmp_trap_udp") {
        const r = refusal(() => checkCommunity("s3cret-community", kind));
        expect(r).toEqual({ status: 400, code: "community_not_allowed", message: "community applies to snmp_trap_udp destinations only." });
      }
    }
  });
});

describe("service_account_json (invalid_service_account)", () => {
  const key = (over: Record<string, unknown> = {}, drop: string[] = []) => {
    const k: Record<string, unknown> = {
      type: "service_account",
      project_id: "nms-test",
      private_key_id: "0123456789abcdef",
      private_key: rsaKey,
      client_email: "forwarder@nms-test.iam.example.com",
      client_id: "1234567890",
      auth_uri: "https://auth.example.com/o/oauth2/auth",
      token_uri: "https://oauth2.example.com/token",
      universe_domain: "example.com",
      ...over,
    };
    for (const d of drop) delete k[d];
    return JSON.stringify(k);
  };

  test("a key file with type, client_email, an RSA private_key and an https token_uri; null or omitted = ambient identity", () => {
    expect(() => checkServiceAccount(key(), "warehouse")).not.toThrow();
    expect(() => checkServiceAccount(key({}, ["project_id", "private_key_id", "client_id", "auth_uri", "universe_domain"]), "warehouse")).not.toThrow();
    expect(() => checkServiceAccount(null, "warehouse")).not.toThrow();
    expect(() => checkServiceAccount(undefined, "warehouse")).not.toThrow();
  });

  test.each([
    ["not JSON", () => "{type: service_account", "is not JSON"],
    ["a JSON array", () => "[]", "is not a JSON object"],
    ["a JSON string", () => '"service_account"', "is not a JSON object"],
    ["another type", () => key({ type: "authorized_user" }), 'type "service_account"'],
    ["no type", () => key({}, ["type"]), 'type "service_account"'],
    ["no client_email", () => key({}, ["client_email"]), "client_email"],
    ["a client_email that is no address", () => key({ client_email: "forwarder" }), "client_email"],
    ["a project_id that is a number", () => key({ project_id: 7 }), "project_id that is not a string"],
    ["no token_uri", () => key({}, ["token_uri"]), "token_uri"],
    ["an http token_uri", () => key({ token_uri: "http://oauth2.example.com/token" }), "token_uri, an https URL"],
    ["a token_uri that is no URL", () => key({ token_uri: "oauth2 token" }), "token_uri, an https URL"],
    ["a token_uri with credentials", () => key({ token_uri: "https://u:p@oauth2.example.com/token" }), "without credentials"],
    ["no private_key", () => key({}, ["private_key"]), "private_key, a PEM private key"],
    ["a private_key that is not PEM", () => key({ private_key: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" }), "private_key, a PEM private key"],
    ["a damaged private_key", () => key({ private_key: rsaKey.replace(/\n[A-Za-z0-9+/]{30}/, "\n" + "A".repeat(30)) }), "does not parse"],
    ["a certificate as private_key", () => key({ private_key: tls.cert }), "does not parse"],
    ["an EC private_key", () => key({ private_key: ecKey }), "not an RSA key"],
  ])("%s is refused, and the message never quotes the key", (_name, value, why) => {
    const text = value();
    const r = refusal(() => checkServiceAccount(text, "warehouse"));
    expect(r).toEqual({ status: 400, code: "invalid_service_account", message: expect.stringContaining(why) });
    expect(r.message).not.toContain("MII");
    expect(r.message).not.toContain("{type");
    expect(r.message.length).toBeLessThan(160);
  });

  test("only on warehouse", () => {
    for (const kind of DEST_KINDS.filter((k) => k !== "warehouse"))
      expect(refusal(() => checkServiceAccount(key(), kind))).toEqual({
        status: 400,
        code: "invalid_service_account",
        message: "service_account_json applies to warehouse destinations only.",
      });
  });
});

describe("filter (invalid_filter)", () => {
  test("null and omitted forward everything; a filter that does not check answers the reason", () => {
    expect(() => checkFilter(null)).not.toThrow();
    expect(() => checkFilter(undefined)).not.toThrow();
    expect(() => checkFilter({ mode: "any", conditions: [{ field: "message", op: "contains", value: "down" }] })).not.toThrow();
    expect(refusal(() => checkFilter({ mode: "all", conditions: [{ field: "message", op: "in_cidr", value: "10.0.0.0/8" }] }))).toEqual({
      status: 400,
      code: "invalid_filter",
      message: "filter: conditions[0]: in_cidr does not apply to message (it takes eq, ne, in_list, contains, not_contains, prefix, regex, not_regex).",
    });
  });
});
