import type { MirrorCount } from "../../../core/worker.js";

/** Per mirror target id: what several UDP readers (or listeners) relayed, summed. */
export function sumMirrorCounts(parts: Iterable<ReadonlyMap<string, MirrorCount>>): Map<string, MirrorCount> {
  const sum = new Map<string, MirrorCount>();
  for (const part of parts)
    for (const [id, c] of part) {
      const t = sum.get(id) ?? { sent: 0, errors: 0 };
      sum.set(id, { sent: t.sent + c.sent, errors: t.errors + c.errors });
    }
  return sum;
}
