import { randomUUID } from "node:crypto";
import { rawQuery } from "../../../test/support/db.js";
import { RuleIndex, rowMatcher, parsePort, type SampleTarget, type ThresholdRule } from "../lib/rules.js";
import {
  clearSeen,
  createThreshold,
  insertFolder,
  insertNode,
  insertProfile,
  publish,
  sample,
  settle,
  startEngineKernel,
  waitForEvent,
  type EngineKernel,
} from "./engineSupport.js";

let seq = 0;
function rule(partial: Partial<ThresholdRule>): ThresholdRule {
  seq++;
  return {
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, "0")}`,
    metric: "m",
    scope_level: "global",
    direction: "above",
    warning: null,
    critical: null,
    warning_above: 1,
    critical_above: null,
    warning_below: null,
    critical_below: null,
    dwell_samples: 1,
    scope_ids: [],
    row_match: null,
    created_at: `2026-01-01T00:00:00.${String(seq).padStart(6, "0")}Z`,
    ...partial,
  };
}

describe("row_match patterns", () => {
  it.each([
    ["Core*", "core-1", true],
    ["Core*", "CORE", true],
    ["Core*", "edge-core", false],
    ["*core*", "edge-CORE-2", true],
    ["/var", "/var", true],
    ["/var", "/var/log", false],
    ["cpu?", "cpu?", true],
    ["cpu?", "cpu1", false],
    ["a.b", "axb", false],
    ["*", "", true],
    ["Physical memory", "physical MEMORY", true],
    ["C:\\*", "c:\\ Label:System", true],
  ])("%s against %j → %s", (pattern, name, expected) => {
    expect(rowMatcher(pattern).test(name)).toBe(expected);
  });
});

describe("interface targets", () => {
  const node = "6F1C0A52-3B8E-4F7D-9A41-2C5E8B7D9F10";
  it("parses <node uuid>:<ifindex>, lower-casing the node", () => {
    expect(parsePort(`${node}:0`)).toEqual({ node_id: node.toLowerCase(), ifindex: 0 });
    expect(parsePort(`${node}:2147483647`)).toEqual({ node_id: node.toLowerCase(), ifindex: 2147483647 });
  });
  it.each([[`${node}`], [`${node}:`], [`${node}:01`], [`${node}:-1`], [`${node}:2147483648`], ["sw1:1"], [`${node}:1:2`]])("refuses %s", (id) => {
    expect(parsePort(id)).toBeNull();
  });
});

describe("precedence (pure)", () => {
  const node = randomUUID();
  const root = randomUUID();
  const child = randomUUID();
  const profile = randomUUID();
  const g = rule({ scope_level: "global" });
  const p = rule({ scope_level: "profile", scope_ids: [profile] });
  const fRoot = rule({ scope_level: "folder", scope_ids: [root] });
  const fChild = rule({ scope_level: "folder", scope_ids: [child] });
  const n = rule({ scope_level: "node", scope_ids: [node] });
  const i = rule({ scope_level: "interface", scope_ids: [`${node}:3`] });
  const target: SampleTarget = { node_id: node, metric: "m", ifindex: 3, row_name: null, folder_path: [root, child], profile_id: profile };
  const winner = (rules: ThresholdRule[], t = target) => new RuleIndex(rules).resolve(t)?.compiled.rule.id ?? null;

  it("interface > node > nearest folder > farther folder > profile > global", () => {
    expect(winner([g, p, fRoot, fChild, n, i])).toBe(i.id);
    expect(winner([g, p, fRoot, fChild, n])).toBe(n.id);
    expect(winner([g, p, fRoot, fChild])).toBe(fChild.id);
    expect(winner([g, p, fRoot])).toBe(fRoot.id);
    expect(winner([g, p])).toBe(p.id);
    expect(winner([g])).toBe(g.id);
    expect(winner([])).toBeNull();
  });

  it("applies an interface rule only to its port, and rules only to their metric", () => {
    expect(winner([g, i], { ...target, ifindex: 4 })).toBe(g.id);
    expect(winner([g, i], { ...target, ifindex: null })).toBe(g.id);
    expect(winner([g, i], { ...target, metric: "other" })).toBeNull();
  });

  it("ignores folders, profiles and nodes the sample's node is not under", () => {
    expect(winner([g, fChild, p, n], { ...target, node_id: randomUUID(), folder_path: [root], profile_id: null })).toBe(g.id);
  });

  it("at one scope, a matching row_match wins over no pattern; a pattern that does not match does not apply", () => {
    const plain = rule({ scope_level: "node", scope_ids: [node] });
    const core = rule({ scope_level: "node", scope_ids: [node], row_match: "core*" });
    const folderPlain = rule({ scope_level: "folder", scope_ids: [child] });
    expect(winner([plain, core], { ...target, ifindex: null, row_name: "Core-7" })).toBe(core.id);
    expect(winner([plain, core], { ...target, ifindex: null, row_name: "edge" })).toBe(plain.id);
    expect(winner([plain, core], { ...target, ifindex: null, row_name: null })).toBe(plain.id);
    // no plain rule at the node scope: a non-matching pattern falls through to the folder
    expect(winner([core, folderPlain], { ...target, ifindex: null, row_name: "edge" })).toBe(folderPlain.id);
    // a more specific scope wins even over a pattern that matches further out
    const folderCore = rule({ scope_level: "folder", scope_ids: [child], row_match: "core*" });
    expect(winner([plain, folderCore], { ...target, ifindex: null, row_name: "core-1" })).toBe(plain.id);
  });

  it("picks the oldest rule between equals", () => {
    const first = rule({ scope_level: "node", scope_ids: [node] });
    const second = rule({ scope_level: "node", scope_ids: [node] });
    expect(winner([second, first])).toBe(first.id);
  });
});

describe("precedence through the engine", () => {
  let k: EngineKernel;
  let root: string;
  let child: string;
  let profile: string;
  let deep: string; // node in child, with profile
  let shallow: string; // node in root, with profile
  let bare: string; // node at the tree root, with profile
  let none: string; // node at the tree root, no profile
  const rules: Record<string, string> = {};

  beforeAll(async () => {
    k = await startEngineKernel();
    root = await insertFolder(k.db, "root");
    child = await insertFolder(k.db, "child", root);
    profile = await insertProfile(k.db, "switches");
    deep = await insertNode(k.db, "deep", { group: child, profile });
    shallow = await insertNode(k.db, "shallow", { group: root, profile });
    bare = await insertNode(k.db, "bare", { profile });
    none = await insertNode(k.db, "none");
    const m = { metric: "prec_metric", direction: "above" };
    rules.global = await createThreshold(k, { ...m, scope_level: "global", warning: 10 });
    rules.profile = await createThreshold(k, { ...m, scope_level: "profile", scope_ids: [profile], warning: 20 });
    rules.root = await createThreshold(k, { ...m, scope_level: "folder", scope_ids: [root], warning: 30 });
    rules.child = await createThreshold(k, { ...m, scope_level: "folder", scope_ids: [child], warning: 40 });
    rules.node = await createThreshold(k, { ...m, scope_level: "node", scope_ids: [deep], warning: 50 });
    rules.port = await createThreshold(k, { ...m, scope_level: "interface", scope_ids: [`${deep}:1`], warning: 60 });
  });
  afterAll(async () => {
    await k?.stop();
  });

  const firedCheck = async (node: string, extra = {}) => {
    clearSeen(k);
    await publish(k, sample(node, "prec_metric", 100, extra));
    const fired = await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    return { check: fired.check, threshold: fired.threshold_value };
  };

  it("fires with the most specific rule at each level", async () => {
    expect(await firedCheck(deep, { ifindex: 1, if_name: "Gi0/1" })).toEqual({ check: rules.port, threshold: 60 });
    expect(await firedCheck(deep, { ifindex: 2, if_name: "Gi0/2" })).toEqual({ check: rules.node, threshold: 50 });
    expect(await firedCheck(shallow)).toEqual({ check: rules.root, threshold: 30 });
    expect(await firedCheck(bare)).toEqual({ check: rules.profile, threshold: 20 });
    expect(await firedCheck(none)).toEqual({ check: rules.global, threshold: 10 });
  });

  it("uses the nearest folder first", async () => {
    const other = await insertNode(k.db, "other-deep", { group: child });
    expect(await firedCheck(other)).toEqual({ check: rules.child, threshold: 40 });
  });

  it("prefers a matching row_match at one scope", async () => {
    const node = await insertNode(k.db, "rows", { group: child });
    const plain = await createThreshold(k, { metric: "row_metric", scope_level: "node", scope_ids: [node], direction: "above", warning: 50 });
    const core = await createThreshold(k, {
      metric: "row_metric",
      scope_level: "node",
      scope_ids: [node],
      direction: "above",
      warning: 70,
      row_match: "CORE*",
    });
    expect(await firedCheck(node, { metric: "row_metric", row: 1, row_name: "core-cpu" })).toEqual({ check: core, threshold: 70 });
    expect(await firedCheck(node, { metric: "row_metric", row: 2, row_name: "io-cpu" })).toEqual({ check: plain, threshold: 50 });
  });

  it("re-reads rules after a threshold change and node rows after an inventory event", async () => {
    const node = await insertNode(k.db, "mover", { group: root });
    expect(await firedCheck(node, { metric: "prec_metric", ifindex: 9 })).toEqual({ check: rules.root, threshold: 30 });
    // the node moves to the child folder (raw SQL; inventory would announce it with inventory.node.updated)
    await rawQuery(k.db, "UPDATE inventory.nodes SET group_id = $1 WHERE id = $2", [child, node]);
    await k.ctx.bus.emit("inventory.node.updated", { id: node, name: "mover", address: "10.0.0.1", group_id: child, folder_path: [root, child] });
    clearSeen(k);
    await publish(k, sample(node, "prec_metric", 100, { ifindex: 9 }));
    // the root rule's incident is cleared at once and the child's rule fires
    const resolved = await waitForEvent(k, "alerts.resolved", (t) => t.node === node);
    const fired = await waitForEvent(k, "alerts.fired", (t) => t.node === node);
    expect(resolved.check).toBe(rules.root);
    expect(fired.check).toBe(rules.child);
    // a new, more specific rule takes over at the next sample
    const mine = await createThreshold(k, { metric: "prec_metric", scope_level: "node", scope_ids: [node], direction: "above", warning: 99 });
    clearSeen(k);
    await publish(k, sample(node, "prec_metric", 100, { ifindex: 9 }));
    expect((await waitForEvent(k, "alerts.fired", (t) => t.node === node)).check).toBe(mine);
    await settle(k);
  });
});
