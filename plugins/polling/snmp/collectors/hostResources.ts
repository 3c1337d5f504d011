import { METRICS } from "../../contract.js";
import type { TableRowReading } from "../../poller/types.js";
import { HR } from "../oids.js";
import { type Column, toNumber, toText } from "../session.js";

/** HOST-RESOURCES-MIB columns walked on every poll (an agent without them costs one var-bind each). */
export const HR_COLUMNS: string[] = [HR.processorLoad, HR.storageDescr, HR.storageSize, HR.storageUsed];

const ROW = /^[0-9]{1,10}$/;
const INT32_MAX = 2147483647;
const rowOf = (idx: string) => (ROW.test(idx) && Number(idx) <= INT32_MAX ? Number(idx) : null);

/**
 * cpu_load_pct per processor (row = hrDeviceIndex, row_name "cpu <index>") and
 * storage_used_pct per storage area with a size (row = hrStorageIndex, row_name = hrStorageDescr).
 * Used and size are both in allocation units, so the units cancel out of the percentage.
 */
export function readHostResources(columns: Map<string, Column>): TableRowReading[] {
  const rows: TableRowReading[] = [];
  for (const [idx, vb] of columns.get(HR.processorLoad) ?? new Map()) {
    const row = rowOf(idx);
    const load = toNumber(vb);
    if (row !== null && load !== null) rows.push({ metric: METRICS.cpuLoadPct, row, row_name: `cpu ${row}`, value: load });
  }
  const descr = columns.get(HR.storageDescr) ?? new Map();
  const size = columns.get(HR.storageSize) ?? new Map();
  for (const [idx, vb] of columns.get(HR.storageUsed) ?? new Map()) {
    const row = rowOf(idx);
    const used = toNumber(vb);
    const total = toNumber(size.get(idx));
    if (row === null || used === null || total === null || total <= 0 || used < 0) continue;
    rows.push({ metric: METRICS.storageUsedPct, row, row_name: toText(descr.get(idx)) ?? `storage ${row}`, value: (used / total) * 100 });
  }
  return rows;
}
