import { rawQuery } from "../../../test/support/db.js";
import type { TestKernel } from "../../../test/support/testKernel.js";
import { ClassifierService, compileRules, oidHasPrefix, pickRule, type RuleRecord } from "../services/ClassifierService.js";
import { startInventoryKernel } from "./support.js";

let seq = 0;
const rule = (r: Partial<RuleRecord>): RuleRecord => ({
  id: `00000000-0000-4000-8000-${String(++seq).padStart(12, "0")}`,
  enabled: true,
  priority: 100,
  profile_id: "p-default",
  sysobjectid_prefix: null,
  sysdescr_regex: null,
  vendor: null,
  model: null,
  ...r,
});

describe("oidHasPrefix", () => {
  it("matches on component boundaries only", () => {
    expect(oidHasPrefix("1.3.6.1.4.1.9.1.516", "1.3.6.1.4.1.9")).toBe(true);
    expect(oidHasPrefix("1.3.6.1.4.1.9", "1.3.6.1.4.1.9")).toBe(true);
    expect(oidHasPrefix("1.3.6.1.4.1.99", "1.3.6.1.4.1.9")).toBe(false);
    expect(oidHasPrefix("1.3.6.1.4.1.99.1", "1.3.6.1.4.1.9")).toBe(false);
    expect(oidHasPrefix("1.3.6.1.4.1", "1.3.6.1.4.1.9")).toBe(false);
  });
});

describe("pickRule", () => {
  it("takes enabled rules in ascending priority, then id", () => {
    const low = rule({ priority: 5, sysobjectid_prefix: "1.3.6.1.4.1.9", profile_id: "p-low" });
    const high = rule({ priority: 50, sysobjectid_prefix: "1.3.6.1.4.1.9.1", profile_id: "p-high" });
    const disabled = rule({ priority: 1, sysobjectid_prefix: "1.3.6.1.4.1.9", profile_id: "p-disabled", enabled: false });
    // Input order does not matter: the function sorts.
    expect(pickRule([high, disabled, low], "1.3.6.1.4.1.9.1.516", null)).toEqual({
      rule_id: low.id,
      profile_id: "p-low",
      matched_by: "sysobjectid",
      vendor: null,
      model: null,
    });
    // Equal priority: the lower id wins.
    const a = rule({ priority: 7, sysdescr_regex: "ios", profile_id: "p-a" });
    const b = rule({ priority: 7, sysdescr_regex: "ios", profile_id: "p-b" });
    expect(pickRule([b, a], null, "Cisco IOS")?.profile_id).toBe("p-a");
  });

  it("lets a sysObjectID prefix match win over any earlier regex match", () => {
    const regexFirst = rule({ priority: 1, sysdescr_regex: "linux", profile_id: "p-linux" });
    const prefixLater = rule({ priority: 900, sysobjectid_prefix: ".1.3.6.1.4.1.8072", profile_id: "p-net-snmp", vendor: "net-snmp", model: "agent" });
    expect(pickRule([regexFirst, prefixLater], "1.3.6.1.4.1.8072.3.2.10", "Linux box 6.1")).toEqual({
      rule_id: prefixLater.id,
      profile_id: "p-net-snmp",
      matched_by: "sysobjectid",
      vendor: "net-snmp",
      model: "agent",
    });
    // No prefix match: the regex decides.
    expect(pickRule([regexFirst, prefixLater], "1.3.6.1.4.1.99.1", "Linux box 6.1")).toMatchObject({ profile_id: "p-linux", matched_by: "sysdescr" });
    // Neither: null.
    expect(pickRule([regexFirst, prefixLater], "1.3.6.1.4.1.99.1", "FreeBSD")).toBeNull();
    expect(pickRule([regexFirst, prefixLater], null, null)).toBeNull();
  });

  it("ignores leading dots on either side", () => {
    const r = rule({ sysobjectid_prefix: "1.3.6.1.4.1.9", profile_id: "p" });
    expect(pickRule([r], ".1.3.6.1.4.1.9.1.1", null)?.profile_id).toBe("p");
    const dotted = rule({ sysobjectid_prefix: ".1.3.6.1.4.1.2636", profile_id: "q" });
    expect(pickRule([dotted], "1.3.6.1.4.1.2636.1.1.1.2.29", null)?.profile_id).toBe("q");
  });

  it("treats a rule with both fields as a prefix rule when its prefix matches, else as a regex rule", () => {
    const both = rule({ priority: 10, sysobjectid_prefix: "1.3.6.1.4.1.9", sysdescr_regex: "nx-os", profile_id: "p-both" });
    const prefixOnly = rule({ priority: 20, sysobjectid_prefix: "1.3.6.1.4.1.2636", profile_id: "p-juniper" });
    expect(pickRule([both, prefixOnly], "1.3.6.1.4.1.9.12.3", "IOS XE")).toMatchObject({ profile_id: "p-both", matched_by: "sysobjectid" });
    // Its prefix does not match, but the Juniper prefix does: authoritative, even though "both"'s regex matches too.
    expect(pickRule([both, prefixOnly], "1.3.6.1.4.1.2636.1", "NX-OS")).toMatchObject({ profile_id: "p-juniper", matched_by: "sysobjectid" });
    // No prefix matches at all: its regex still counts.
    expect(pickRule([both, prefixOnly], "1.3.6.1.4.1.5", "Cisco NX-OS")).toMatchObject({ profile_id: "p-both", matched_by: "sysdescr" });
  });

  it("matches regexes case-insensitively and skips one that does not compile", () => {
    const broken = rule({ priority: 1, sysdescr_regex: "([unclosed", profile_id: "p-broken" });
    const ok = rule({ priority: 2, sysdescr_regex: "^cisco ios", profile_id: "p-ios" });
    expect(pickRule([broken, ok], null, "CISCO IOS Software, C2960")).toMatchObject({ profile_id: "p-ios", matched_by: "sysdescr" });
  });

  it("gives the same answers from a compiled rule set", () => {
    const rules = [
      rule({ priority: 3, sysdescr_regex: "junos", profile_id: "p-junos" }),
      rule({ priority: 4, sysobjectid_prefix: "1.3.6.1.4.1.9", profile_id: "p-cisco" }),
    ];
    const compiled = compileRules(rules);
    for (const [oid, descr] of [
      ["1.3.6.1.4.1.9.1", "JUNOS 21"],
      ["1.3.6.1.4.1.2636", "JUNOS 21"],
      [null, null],
    ] as const) {
      expect(pickRule(compiled, oid, descr)).toEqual(pickRule(rules, oid, descr));
    }
  });
});

describe("ClassifierService (the exported classifier) over the stored rules", () => {
  let k: TestKernel;
  beforeAll(async () => {
    k = await startInventoryKernel();
  });
  afterAll(async () => {
    await k?.stop();
  });

  it("classifies from the enabled rules in the table", async () => {
    const db = k.databaseUrl!;
    const [p1, p2, p3] = await Promise.all(
      ["cisco", "linux", "off"].map(
        async (name) => (await rawQuery<{ id: string }>(db, "INSERT INTO inventory.profiles (name) VALUES ($1) RETURNING id", [name]))[0].id,
      ),
    );
    const [r1] = await rawQuery<{ id: string }>(
      db,
      `INSERT INTO inventory.classification_rules (priority, profile_id, sysobjectid_prefix, vendor, model) VALUES (50, $1, '1.3.6.1.4.1.9', 'Cisco', NULL) RETURNING id`,
      [p1],
    );
    await rawQuery(db, `INSERT INTO inventory.classification_rules (priority, profile_id, sysdescr_regex) VALUES (10, $1, 'linux')`, [p2]);
    await rawQuery(db, `INSERT INTO inventory.classification_rules (priority, enabled, profile_id, sysobjectid_prefix) VALUES (1, false, $1, '1.3')`, [p3]);

    const classifier = k.kernel.context("inventory")!.get(ClassifierService);
    expect(await classifier.classify("1.3.6.1.4.1.9.1.516", "Linux inside")).toEqual({
      rule_id: r1.id,
      profile_id: p1,
      matched_by: "sysobjectid",
      vendor: "Cisco",
      model: null,
    });
    expect(await classifier.classify(null, "Ubuntu LINUX")).toMatchObject({ profile_id: p2, matched_by: "sysdescr" });
    expect(await classifier.classify("1.3.6.1.4.1.99", "FreeBSD")).toBeNull();
  });
});
