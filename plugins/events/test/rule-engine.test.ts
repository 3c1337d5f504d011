import { compileRule, type CompiledRule } from "../rules/compile.js";
import { RuleEngine, type RuleEvent } from "../rules/engine.js";

const N1 = "11111111-1111-4111-8111-111111111111";
const N2 = "22222222-2222-4222-8222-222222222222";
const SRC = "33333333-3333-4333-8333-333333333333";
const LINK_DOWN = "1.3.6.1.6.3.1.1.5.3";
const LINK_UP = "1.3.6.1.6.3.1.1.5.4";

const rule = (id: string, over: Record<string, unknown> = {}): CompiledRule => {
  const r = compileRule({ name: `rule ${id}`, pattern: "link down", match_kind: "substring", severity: "critical", ...over }, id);
  if (!r.ok) throw new Error(`${r.field} ${r.message}`);
  return r.rule;
};
const ev = (text: string, at_ms: number, over: Partial<RuleEvent> = {}): RuleEvent => ({
  kind: "syslog",
  node_id: N1,
  source_id: null,
  source_kind: "syslog",
  text,
  trap_oid: null,
  varbinds: [],
  at_ms,
  ...over,
});
const trap = (trap_oid: string, at_ms: number, varbinds: RuleEvent["varbinds"] = [], over: Partial<RuleEvent> = {}): RuleEvent =>
  ev([trap_oid, ...varbinds.map((v) => `${v.oid}=${v.value}`)].join(" "), at_ms, { kind: "trap", source_kind: "trap", trap_oid, varbinds, ...over });
const engine = (...rules: CompiledRule[]) => {
  const e = new RuleEngine();
  e.setRules(rules);
  return e;
};

describe("matching and actions", () => {
  test("a matching event fires at once with min_count 1; a repeat is suppressed", () => {
    const e = engine(rule("r1"));
    const first = e.evaluate(ev("Link DOWN on Gi0/1", 1000));
    expect(first).toEqual({
      action: "fired",
      rule_id: "r1",
      alerts: [{ kind: "fire", rule_id: "r1", node_id: N1, severity: "critical", title: "rule r1", at_ms: 1000, count: 1 }],
    });
    expect(e.evaluate(ev("link down again", 2000))).toEqual({ action: "suppressed", rule_id: "r1", alerts: [] });
    expect(e.evaluate(ev("all good", 3000))).toEqual({ action: "unmatched", rule_id: null, alerts: [] });
    expect(e.activeAlerts()).toEqual([{ rule_id: "r1", node_id: N1, last_ms: 2000 }]);
  });

  test("each match kind through the engine", () => {
    const e = engine(
      rule("sub", { pattern: "FAN" }),
      rule("exact", { match_kind: "exact", pattern: "power supply failed" }),
      rule("re", { match_kind: "regex", pattern: "Interface (\\S+), changed state to down" }),
      rule("oid", { match_kind: "trap_oid", pattern: "1.3.6.1.6.3.1.1.5" }),
      rule("vb", { match_kind: "varbind", pattern: "1.3.6.1.2.1.2.2.1.8~^[27]$" }),
    );
    expect(e.evaluate(ev("fan tray 2 removed", 1, { node_id: N1 })).rule_id).toBe("sub");
    expect(e.evaluate(ev("power supply failed", 1, { node_id: N2 })).rule_id).toBe("exact");
    expect(e.evaluate(ev("power supply failed!", 1, { node_id: N1 })).action).toBe("unmatched");
    expect(e.evaluate(ev("%LINK-3-UPDOWN: Interface Gi0/1, changed state to down", 1)).rule_id).toBe("re");
    expect(e.evaluate(ev("Interface Gi0/1, changed state to down", 1)).action).toBe("suppressed");
    const down = e.evaluate(trap(LINK_DOWN, 1, [{ oid: "1.3.6.1.2.1.2.2.1.8.7", type: "Integer", value: 2 }], { node_id: N2 }));
    expect(down.action).toBe("fired");
    expect(down.alerts.map((a) => a.rule_id).sort()).toEqual(["oid", "vb"]);
    expect(e.evaluate(trap("1.3.6.1.4.1.9.9.41.2.0.1", 1, [{ oid: "1.3.6.1.2.1.2.2.1.8.7", type: "Integer", value: 1 }], { node_id: N2 })).action).toBe(
      "unmatched",
    );
  });
});

describe("windows", () => {
  test("fires exactly at the min_count-th match within the window", () => {
    const e = engine(rule("r", { min_count: 3, window_secs: 10 }));
    expect(e.evaluate(ev("link down", 0)).action).toBe("counted");
    expect(e.evaluate(ev("link down", 4000)).action).toBe("counted");
    expect(e.windowCount("r", N1)).toBe(2);
    const third = e.evaluate(ev("link down", 10_000));
    expect(third.action).toBe("fired");
    expect(third.alerts).toEqual([{ kind: "fire", rule_id: "r", node_id: N1, severity: "critical", title: "rule r", at_ms: 10_000, count: 3 }]);
    expect(e.evaluate(ev("link down", 11_000)).action).toBe("suppressed");
  });

  test("matches spread wider than the window never fire", () => {
    const e = engine(rule("r", { min_count: 3, window_secs: 10 }));
    for (let k = 0; k < 20; k++) expect(e.evaluate(ev("link down", k * 5001)).action).toBe("counted");
    expect(e.windowCount("r", N1)).toBe(2);
    expect(e.activeAlerts()).toEqual([]);
  });

  test("windows are per node; events without a node are counted and keep no state", () => {
    const e = engine(rule("r", { min_count: 2 }));
    expect(e.evaluate(ev("link down", 0, { node_id: N1 })).action).toBe("counted");
    expect(e.evaluate(ev("link down", 1, { node_id: N2 })).action).toBe("counted");
    expect(e.evaluate(ev("link down", 2, { node_id: null })).action).toBe("counted");
    expect(e.evaluate(ev("link down", 3, { node_id: null })).action).toBe("counted");
    expect(e.stateCounts()).toEqual({ windows: 2, active: 0 });
    expect(e.evaluate(ev("link down", 4, { node_id: N2 })).alerts).toEqual([expect.objectContaining({ kind: "fire", node_id: N2, count: 2 })]);
    const single = engine(rule("s"));
    expect(single.evaluate(ev("link down", 0, { node_id: null }))).toEqual({ action: "counted", rule_id: "s", alerts: [] });
  });
});

describe("clearing", () => {
  test("the clear pattern clears an active alert; without one the rule contributes nothing", () => {
    const e = engine(rule("r", { clear_pattern: "link up" }));
    expect(e.evaluate(ev("link up", 0))).toEqual({ action: "unmatched", rule_id: null, alerts: [] });
    e.evaluate(ev("link down", 1000));
    expect(e.evaluate(ev("link up", 2000, { node_id: N2 })).action).toBe("unmatched");
    expect(e.evaluate(ev("Link Up", 3000))).toEqual({
      action: "cleared",
      rule_id: "r",
      alerts: [{ kind: "clear", rule_id: "r", node_id: N1, at_ms: 3000, reason: "clear_pattern" }],
    });
    expect(e.activeAlerts()).toEqual([]);
    expect(e.evaluate(ev("link down", 4000)).action).toBe("fired");
  });

  test("an event matching both patterns while no alert is active does nothing for that rule", () => {
    const e = engine(rule("r", { pattern: "link", clear_pattern: "link up" }));
    expect(e.evaluate(ev("link up", 0))).toEqual({ action: "unmatched", rule_id: null, alerts: [] });
    expect(e.evaluate(ev("link down", 1)).action).toBe("fired");
    expect(e.evaluate(ev("link up", 2)).action).toBe("cleared");
  });

  test("trap rules clear with a trap OID", () => {
    const e = engine(rule("t", { match_kind: "trap_oid", pattern: LINK_DOWN, clear_pattern: LINK_UP }));
    expect(e.evaluate(trap(LINK_DOWN, 0)).action).toBe("fired");
    expect(e.evaluate(trap(LINK_UP, 1)).action).toBe("cleared");
  });

  test("ttl clears after silence; suppressed repeats refresh the clock", () => {
    const e = engine(rule("r", { ttl_secs: 60 }), rule("forever", { pattern: "fan" }));
    e.evaluate(ev("link down", 0));
    e.evaluate(ev("fan", 0));
    expect(e.evaluate(ev("link down", 30_000)).action).toBe("suppressed");
    expect(e.expire(60_000)).toEqual([]);
    expect(e.expire(89_999)).toEqual([]);
    expect(e.expire(90_000)).toEqual([{ kind: "clear", rule_id: "r", node_id: N1, at_ms: 90_000, reason: "ttl" }]);
    expect(e.activeAlerts()).toEqual([{ rule_id: "forever", node_id: N1, last_ms: 0 }]);
    expect(e.evaluate(ev("link down", 91_000)).action).toBe("fired");
  });

  test("after a clear by pattern, min_count new matches are needed to fire again", () => {
    const e = engine(rule("r", { min_count: 3, window_secs: 60, clear_pattern: "link up" }));
    const actions = ["link down", "link down", "link down", "link up", "link down", "link down", "link down"].map(
      (text, k) => e.evaluate(ev(text, k * 1000)).action,
    );
    expect(actions).toEqual(["counted", "counted", "fired", "cleared", "counted", "counted", "fired"]);
  });

  test("after a clear by TTL, min_count new matches are needed to fire again", () => {
    const e = engine(rule("r", { min_count: 3, window_secs: 600, ttl_secs: 5 }));
    for (const at of [0, 1000]) expect(e.evaluate(ev("link down", at)).action).toBe("counted");
    expect(e.evaluate(ev("link down", 2000)).action).toBe("fired");
    expect(e.expire(7000)).toEqual([{ kind: "clear", rule_id: "r", node_id: N1, at_ms: 7000, reason: "ttl" }]);
    expect(e.windowCount("r", N1)).toBe(0);
    expect(e.evaluate(ev("link down", 8000)).action).toBe("counted");
    expect(e.evaluate(ev("link down", 9000)).action).toBe("counted");
    expect(e.evaluate(ev("link down", 10_000)).alerts).toEqual([expect.objectContaining({ kind: "fire", count: 3 })]);
  });

  test("expire drops windows with no match left in them", () => {
    const e = engine(rule("r", { min_count: 5, window_secs: 10 }));
    e.evaluate(ev("link down", 0));
    e.evaluate(ev("link down", 0, { node_id: N2 }));
    e.evaluate(ev("link down", 8000, { node_id: N2 }));
    e.expire(15_000);
    expect(e.stateCounts().windows).toBe(1);
    expect(e.windowCount("r", N2)).toBe(2);
  });
});

describe("restore and setRules", () => {
  test("restore resumes active alerts of known rules", () => {
    const e = engine(rule("r", { ttl_secs: 10 }));
    expect(
      e.restore([
        { rule_id: "r", node_id: N1, last_ms: 5000 },
        { rule_id: "gone", node_id: N1, last_ms: 0 },
      ]),
    ).toBe(1);
    expect(e.evaluate(ev("link down", 6000)).action).toBe("suppressed");
    expect(e.expire(16_000)).toEqual([{ kind: "clear", rule_id: "r", node_id: N1, at_ms: 16_000, reason: "ttl" }]);
  });

  test("state survives a setRules that keeps the semantics, not one that changes them", () => {
    const e = engine(rule("a", { min_count: 2 }), rule("b"));
    e.evaluate(ev("link down", 0));
    expect(e.windowCount("a", N1)).toBe(1);
    expect(e.activeAlerts().map((a) => a.rule_id)).toEqual(["b"]);
    expect(e.setRules([rule("a", { min_count: 2, name: "renamed", severity: "info" }), rule("b", { pattern: "link" })])).toEqual([
      { rule_id: "b", node_id: N1, last_ms: 0 },
    ]);
    expect(e.windowCount("a", N1)).toBe(1);
    const fired = e.evaluate(ev("link down", 1));
    expect(fired.alerts).toEqual([
      { kind: "fire", rule_id: "a", node_id: N1, severity: "info", title: "renamed", at_ms: 1, count: 2 },
      { kind: "fire", rule_id: "b", node_id: N1, severity: "critical", title: "rule b", at_ms: 1, count: 1 },
    ]);
    expect(e.setRules([rule("a", { min_count: 2, enabled: false })])).toHaveLength(2);
    expect(e.evaluate(ev("link down", 2)).action).toBe("unmatched");
    expect(e.stateCounts()).toEqual({ windows: 0, active: 0 });
  });
});

describe("restrictions", () => {
  test("node_id, source_id and source_kind restrict the events a rule sees", () => {
    const e = engine(rule("node", { node_id: N2 }), rule("src", { source_id: SRC, pattern: "fan" }), rule("http", { source_kind: "http", pattern: "psu" }));
    expect(e.evaluate(ev("link down", 0, { node_id: N1 })).action).toBe("unmatched");
    expect(e.evaluate(ev("link down", 0, { node_id: N2 })).rule_id).toBe("node");
    expect(e.evaluate(ev("fan", 0, { source_id: null })).action).toBe("unmatched");
    expect(e.evaluate(ev("fan", 0, { source_id: SRC, source_kind: "http" })).rule_id).toBe("src");
    expect(e.evaluate(ev("psu", 0)).action).toBe("unmatched");
    expect(e.evaluate(ev("psu", 0, { source_kind: "http" })).rule_id).toBe("http");
  });

  test("trap match kinds only see traps, even when the text looks like one", () => {
    const e = engine(rule("t", { match_kind: "trap_oid", pattern: LINK_DOWN }));
    expect(e.evaluate(ev(LINK_DOWN, 0, { trap_oid: LINK_DOWN })).action).toBe("unmatched");
    expect(e.evaluate(trap(LINK_DOWN, 0)).action).toBe("fired");
  });

  test("text rules see traps through their text", () => {
    const e = engine(rule("s", { pattern: "1.3.6.1.2.1.2.2.1.8.7=2" }));
    expect(e.evaluate(trap(LINK_DOWN, 0, [{ oid: "1.3.6.1.2.1.2.2.1.8.7", type: "Integer", value: 2 }])).action).toBe("fired");
  });

  test("the text is cut at 8192 characters before matching", () => {
    const e = engine(rule("late", { pattern: "needle" }));
    expect(e.evaluate(ev("x".repeat(8186) + "needle", 0)).action).toBe("fired");
    expect(e.evaluate(ev("x".repeat(8187) + "needle", 0, { node_id: N2 })).action).toBe("unmatched");
  });
});

describe("several rules", () => {
  test("the action is the most significant outcome; every rule's alerts are returned", () => {
    const e = engine(
      rule("count", { pattern: "port", min_count: 50 }),
      rule("clear", { pattern: "port down", clear_pattern: "port up" }),
      rule("fire", { pattern: "port up" }),
      rule("sup", { pattern: "port" }),
    );
    const a = e.evaluate(ev("port down", 0));
    expect(a.action).toBe("fired");
    expect(a.rule_id).toBe("clear");
    expect(a.alerts.map((x) => `${x.kind}:${x.rule_id}`)).toEqual(["fire:clear", "fire:sup"]);
    const b = e.evaluate(ev("port up", 1));
    expect(b.action).toBe("fired");
    expect(b.rule_id).toBe("fire");
    expect(b.alerts.map((x) => `${x.kind}:${x.rule_id}`)).toEqual(["clear:clear", "fire:fire"]);
    const c = e.evaluate(ev("port up", 2));
    expect(c).toEqual({ action: "suppressed", rule_id: "fire", alerts: [] });
    e.evaluate(ev("port down", 3));
    expect(e.evaluate(ev("port up", 4)).action).toBe("cleared");
    expect(e.evaluate(ev("port flap", 5))).toEqual({ action: "suppressed", rule_id: "sup", alerts: [] });
  });
});

describe("bounds", () => {
  test("a window holds fewer than min_count live timestamps, and its array stays short", () => {
    // Matches 600 ms apart in a 1 s window never reach 3, so the window lives on and slides for 10,000 matches.
    const e = engine(rule("r", { min_count: 3, window_secs: 1 }));
    for (let k = 0; k < 10_000; k++) expect(e.evaluate(ev("link down", k * 600)).action).toBe("counted");
    expect(e.windowCount("r", N1)).toBe(2);
    const w = (e as unknown as { windows: Set<{ times: number[] }> }).windows;
    expect(w.size).toBe(1);
    for (const v of w) expect(v.times.length).toBeLessThanOrEqual(40);
  });

  test("a rule that fires keeps no window behind", () => {
    const e = engine(rule("r", { min_count: 3, window_secs: 60 }));
    for (const at of [0, 1, 2]) e.evaluate(ev("link down", at));
    expect(e.activeAlerts()).toHaveLength(1);
    expect(e.stateCounts()).toEqual({ windows: 0, active: 1 });
  });

  test("the number of windows is capped, the least recently matched dropped first; active alerts are kept", () => {
    const e = new RuleEngine({ maxStates: 100 });
    e.setRules([rule("r", { min_count: 2 }), rule("now")]);
    const node = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, "0")}`;
    for (let k = 0; k < 1000; k++) e.evaluate(ev("link down", k, { node_id: node(k) }));
    expect(e.stateCounts()).toEqual({ windows: 100, active: 1000 });
    expect(e.windowCount("r", node(899))).toBe(0);
    expect(e.windowCount("r", node(900))).toBe(1);
    e.evaluate(ev("link down", 2000, { node_id: node(900) }));
    expect(e.activeAlerts().filter((a) => a.rule_id === "r")).toEqual([{ rule_id: "r", node_id: node(900), last_ms: 2000 }]);
  });

  test("a window matched again moves to the recent end and outlives untouched ones", () => {
    const e = new RuleEngine({ maxStates: 100 });
    e.setRules([rule("r", { min_count: 3 })]);
    const node = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, "0")}`;
    for (let k = 0; k < 60; k++) e.evaluate(ev("link down", k, { node_id: node(k) }));
    e.evaluate(ev("link down", 100, { node_id: node(0) }));
    for (let k = 60; k < 150; k++) e.evaluate(ev("link down", k, { node_id: node(k) }));
    expect(e.stateCounts().windows).toBe(100);
    expect(e.windowCount("r", node(0))).toBe(2);
    expect(e.windowCount("r", node(1))).toBe(0);
    expect(e.windowCount("r", node(51))).toBe(1);
  });

  test("the default cap is 100000", () => {
    expect(new RuleEngine().maxStates).toBe(100000);
  });
});

describe("volume (not timed)", () => {
  test("100 rules over 20000 mixed events keep consistent counts", () => {
    const rules: CompiledRule[] = [];
    for (let k = 0; k < 100; k++) {
      const kind = ["substring", "regex", "trap_oid", "varbind", "exact"][k % 5];
      const pattern = { substring: `evt${k}`, regex: `^%SYS-${k}-\\w+:`, trap_oid: `1.3.6.1.4.1.${k}`, varbind: `1.3.6.1.2.1.${k}=1`, exact: `exact ${k}` }[
        kind
      ]!;
      rules.push(rule(`r${k}`, { match_kind: kind, pattern, min_count: 1 + (k % 3) }));
    }
    const e = engine(...rules);
    const tally: Record<string, number> = {};
    for (let j = 0; j < 20_000; j++) {
      const k = j % 137;
      const node = `00000000-0000-4000-8000-${String(j % 50).padStart(12, "0")}`;
      const x =
        j % 2 === 0
          ? e.evaluate(ev(`%SYS-${k}-MSG: evt${k} happened`, j, { node_id: node }))
          : e.evaluate(trap(`1.3.6.1.4.1.${k}.0.1`, j, [{ oid: `1.3.6.1.2.1.${k}.1`, type: "Integer", value: 1 }], { node_id: node }));
      tally[x.action] = (tally[x.action] ?? 0) + 1;
    }
    expect(Object.values(tally).reduce((a, b) => a + b, 0)).toBe(20_000);
    expect(tally.fired).toBeGreaterThan(0);
    expect(tally.suppressed).toBeGreaterThan(0);
    expect(tally.unmatched).toBeGreaterThan(0);
  });
});
