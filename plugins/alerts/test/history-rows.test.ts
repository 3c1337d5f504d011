import { isUuid } from "../../../core/index.js";
import { LIVENESS_CHECK_ID, POOL_CHECK_ID } from "../lib/checks.js";
import { historyRow, transitionOf } from "../lib/history.js";
import type { ActiveRow } from "../repositories/IncidentRepository.js";

const NODE = "0c8f5d1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f";
const CHECK = "7d2e4f60-1a2b-4c3d-9e8f-112233445566";

const threshold: ActiveRow = {
  incident_key: `node:${NODE}:${CHECK}:if:3`,
  subject_kind: "node",
  node_id: NODE,
  subject_name: null,
  check_id: CHECK,
  metric: "if_in_bps",
  ifindex: 3,
  if_name: "eth2",
  row_key: null,
  row_name: null,
  severity: "warning",
  state: "warning",
  direction: "above",
  observed_value: 950,
  threshold_value: 900,
  title: "if_in_bps above 900 on core-1 eth2",
  fired_at_ms: 1_700_000_000_123,
};

const liveness: ActiveRow = {
  ...threshold,
  incident_key: `node:${NODE}:${LIVENESS_CHECK_ID}`,
  check_id: LIVENESS_CHECK_ID,
  metric: null,
  ifindex: null,
  if_name: null,
  severity: "critical",
  state: "unreachable",
  direction: null,
  observed_value: null,
  threshold_value: null,
  title: "core-1 unreachable",
};

const pool: ActiveRow = {
  ...liveness,
  incident_key: `pool:edge:${POOL_CHECK_ID}`,
  subject_kind: "pool",
  node_id: null,
  subject_name: "edge",
  check_id: POOL_CHECK_ID,
};

describe("historyRow", () => {
  it("a fire carries the incident as it fired, at its fire time, unresolved", () => {
    const row = historyRow(threshold);
    const { fired_at_ms: _f, ...incident } = threshold;
    expect(row).toEqual({ ...incident, id: expect.any(String), at_unix_ms: threshold.fired_at_ms, resolved: false });
    expect(isUuid(row.id)).toBe(true);
  });

  it("a clear of a threshold incident carries the value that cleared it and the port's current name", () => {
    const row = historyRow(threshold, { observed_value: 120, if_name: "uplink" });
    expect(row).toMatchObject({
      resolved: true,
      observed_value: 120,
      if_name: "uplink",
      threshold_value: 900,
      severity: "warning",
      at_unix_ms: threshold.fired_at_ms,
    });
  });

  it("a clear without a sample keeps the port's name and has no value", () => {
    expect(historyRow(threshold, { observed_value: null, if_name: null })).toMatchObject({ resolved: true, observed_value: null, if_name: "eth2" });
  });

  it("liveness and pool clears carry no observed value", () => {
    expect(historyRow(liveness, { observed_value: 1, if_name: null })).toMatchObject({ resolved: true, observed_value: null, state: "unreachable" });
    expect(historyRow(pool, { observed_value: 1, if_name: null })).toMatchObject({
      resolved: true,
      observed_value: null,
      subject_kind: "pool",
      subject_name: "edge",
      node_id: null,
    });
  });

  it("takes only the row's columns from what it is given (no folder_path, no fired_at_ms)", () => {
    const given = { ...threshold, folder_path: ["x"] } as ActiveRow;
    const row = historyRow(given);
    const { fired_at_ms: _f, folder_path: _p, ...columns } = given as ActiveRow & { folder_path: string[] };
    expect(Object.keys(row).sort()).toEqual([...Object.keys(columns), "id", "at_unix_ms", "resolved"].sort());
  });

  it("ids increase in decision order", () => {
    const ids = Array.from({ length: 50 }, (_, i) => historyRow(i % 2 ? threshold : liveness).id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("transitionOf", () => {
  it("names a committed row's fields as the contract does, with the flush's time and the node's folders", () => {
    const row = historyRow(threshold, { observed_value: 120, if_name: "uplink" });
    expect(transitionOf(row, "2026-01-01T00:00:00.000001Z", ["f1", "f2"])).toEqual({
      id: row.id,
      incident_key: threshold.incident_key,
      recorded_at: "2026-01-01T00:00:00.000001Z",
      at_unix_ms: threshold.fired_at_ms,
      check: CHECK,
      direction: "above",
      ifindex: 3,
      if_name: "uplink",
      metric: "if_in_bps",
      node: NODE,
      observed_value: 120,
      threshold_value: 900,
      resolved: true,
      row: null,
      row_name: null,
      severity: "warning",
      state: "warning",
      subject_kind: "node",
      subject_name: null,
      title: threshold.title,
      folder_path: ["f1", "f2"],
    });
  });
});
