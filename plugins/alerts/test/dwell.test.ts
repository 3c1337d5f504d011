import { dwellStep, newDwellState } from "../lib/dwell.js";
import type { Level } from "../lib/bands.js";
import {
  activeAlerts,
  createThreshold,
  events,
  history,
  insertNode,
  publishEach,
  sample,
  settle,
  startEngineKernel,
  type EngineKernel,
} from "./engineSupport.js";

/** Feeds levels; returns what each sample committed (null = nothing). */
function run(levels: Level[], dwell: number, start: Level = 0): (Level | null)[] {
  const s = newDwellState(start);
  return levels.map((l) => dwellStep(s, l, dwell));
}

describe("dwell (pure)", () => {
  it("commits every change at once with dwell 1", () => {
    expect(run([1, 2, 2, 1, 0, 0], 1)).toEqual([1, 2, null, 1, 0, null]);
  });

  it("fires only after dwell consecutive samples beyond the bound", () => {
    expect(run([1, 1, 1, 1], 3)).toEqual([null, null, 1, null]);
  });

  it("clears only after dwell consecutive normal samples", () => {
    expect(run([0, 0, 0], 3, 1)).toEqual([null, null, 0]);
  });

  it("starts over when a sample goes back to the committed level", () => {
    expect(run([1, 1, 0, 1, 1, 1], 3)).toEqual([null, null, null, null, null, 1]);
    expect(run([0, 0, 1, 0, 0, 0], 3, 1)).toEqual([null, null, null, null, null, 0]);
  });

  it("escalates to the level every sample of the streak reached", () => {
    // from normal: warning, critical, critical → warning (all three were at least warning)
    expect(run([1, 2, 2], 3)).toEqual([null, null, 1]);
    // then three criticals → critical
    expect(run([1, 2, 2, 2, 2, 2], 3)).toEqual([null, null, 1, null, null, 2]);
    // straight critical
    expect(run([2, 2, 2], 3)).toEqual([null, null, 2]);
  });

  it("de-escalates to the least improvement the streak held", () => {
    // from critical: warning, normal, normal → warning; three normals more → clear
    expect(run([1, 0, 0, 0, 0, 0], 3, 2)).toEqual([null, null, 1, null, null, 0]);
    expect(run([0, 0, 0], 3, 2)).toEqual([null, null, 0]);
  });

  it("starts over when the streak changes side", () => {
    // committed warning: critical, critical, normal, normal, normal → clear only after the three normals
    expect(run([2, 2, 0, 0, 0], 3, 1)).toEqual([null, null, null, null, 0]);
  });
});

describe("dwell through the engine", () => {
  let k: EngineKernel;
  let node: string;
  let rule: string;

  beforeAll(async () => {
    k = await startEngineKernel();
    node = await insertNode(k.db, "dwell-node");
    rule = await createThreshold(k, {
      metric: "cpu_load_pct",
      scope_level: "node",
      scope_ids: [node],
      direction: "above",
      warning: 80,
      critical: 90,
      dwell_samples: 3,
    });
  });
  afterAll(async () => {
    await k?.stop();
  });

  const feed = async (...values: number[]) => {
    await publishEach(k, ...values.map((v) => sample(node, "cpu_load_pct", v)));
    await settle(k);
  };

  it("fires on the third consecutive sample above the bound, not before", async () => {
    await feed(85, 86);
    expect(await history(k, "node_id = $1", [node])).toEqual([]);
    await feed(50, 85, 85);
    expect(await history(k, "node_id = $1", [node])).toEqual([]);
    await feed(87);
    const rows = await history(k, "node_id = $1", [node]);
    expect(rows).toEqual([expect.objectContaining({ resolved: false, severity: "warning", observed_value: 87, check_id: rule })]);
    expect(events(k, "alerts.fired", node)).toHaveLength(1);
  });

  it("escalates after three critical samples, as a clear of warning and a fire of critical", async () => {
    await feed(95, 95);
    expect(await history(k, "node_id = $1", [node])).toHaveLength(1);
    await feed(96);
    const rows = await history(k, "node_id = $1", [node]);
    expect(rows.map((r) => [r.severity, r.resolved])).toEqual([
      ["warning", false],
      ["warning", true],
      ["critical", false],
    ]);
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([expect.objectContaining({ severity: "critical", observed_value: 96 })]);
  });

  it("clears only after three normal samples", async () => {
    await feed(10, 10);
    expect((await history(k, "node_id = $1", [node])).filter((r) => r.resolved)).toHaveLength(1);
    await feed(95, 10, 10);
    expect((await history(k, "node_id = $1", [node])).filter((r) => r.resolved)).toHaveLength(1);
    await feed(10);
    const rows = await history(k, "node_id = $1", [node]);
    expect(rows.at(-1)).toEqual(expect.objectContaining({ severity: "critical", resolved: true, observed_value: 10 }));
    expect(await activeAlerts(k, "node_id = $1", [node])).toEqual([]);
    expect(events(k, "alerts.resolved", node).map((t) => t.severity)).toEqual(["warning", "critical"]);
  });
});
