// The event list of the Events view: the node's name in Source, traps by name (GET /events/trap-names), and a trap's
// varbinds (named where known) in a row that expands.
import { Fragment } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, unwrapped } from "../session.tsx";
import { fmtTime } from "../ui.tsx";

type Event = Schemas["EventView"];
export type TrapName = Schemas["TrapNameView"];
interface Varbind {
  oid: string;
  type?: string;
  value: unknown;
}

/** OID → name: an exact row, else an object row the OID lies under ("IF-MIB::ifIndex.2"). User rows win over built-in ones. */
export function trapNamer(rows: TrapName[]): (oid: string) => string | null {
  const exact = new Map<string, string>();
  const objects = new Map<string, string>();
  for (const r of [...rows.filter((r) => r.builtin), ...rows.filter((r) => !r.builtin)]) {
    exact.set(r.oid, r.name);
    if (r.kind === "object") objects.set(r.oid, r.name);
    else objects.delete(r.oid);
  }
  return (oid) => {
    const hit = exact.get(oid);
    if (hit) return hit;
    const parts = oid.split(".");
    for (let i = parts.length - 1; i > 0; i--) {
      const name = objects.get(parts.slice(0, i).join("."));
      if (name) return `${name}.${parts.slice(i).join(".")}`;
    }
    return null;
  };
}

/** Node names by id: those the list answered, and one GET /nodes/{id} for each other id seen (live rows carry none). */
function useNodeNames(events: Event[]): Map<string, string> {
  const [names, setNames] = useState(() => new Map<string, string>());
  useEffect(() => {
    const known = new Map(names);
    let added = false;
    for (const e of events)
      if (e.node_id && e.node_name && !known.has(e.node_id)) {
        known.set(e.node_id, e.node_name);
        added = true;
      }
    if (added) setNames(known);
    const missing = [...new Set(events.filter((e) => e.node_id && !known.has(e.node_id)).map((e) => e.node_id!))];
    for (const id of missing.slice(0, 20)) {
      known.set(id, id);
      void unwrapped(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } })).then(
        (n) => setNames((m) => new Map(m).set(id, n.name)),
        () => undefined,
      );
    }
  }, [events]);
  return names;
}

export function EventTable({ events, trapNames }: { events: Event[]; trapNames: TrapName[] }) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  const nameOf = useMemo(() => trapNamer(trapNames), [trapNames]);
  const nodeNames = useNodeNames(events);
  if (!events.length) return <p class="muted">No events.</p>;
  const toggle = (id: string) =>
    setOpen((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  return (
    <div class="table-wrap">
      <table class="events" data-testid="event-table">
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">Kind</th>
            <th scope="col">Sev</th>
            <th scope="col">Source</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => {
            const varbinds = ((e.data as { varbinds?: Varbind[] } | null)?.varbinds ?? []) as Varbind[];
            const trapName = e.trap_oid ? (e.trap_name ?? nameOf(e.trap_oid)) : null;
            const nodeName = e.node_id ? (e.node_name ?? nodeNames.get(e.node_id) ?? e.node_id) : null;
            const expanded = open.has(e.id);
            return (
              <Fragment key={e.id}>
                <tr data-event={e.id} data-kind={e.kind}>
                  <td>
                    <time>{fmtTime(e.received_at)}</time>
                  </td>
                  <td>{e.kind}</td>
                  <td>{e.severity ?? "–"}</td>
                  <td data-testid="event-source">
                    {e.node_id ? (
                      <a href={`#/node/${e.node_id}`} title={e.source_ip ?? undefined}>
                        {nodeName}
                      </a>
                    ) : (
                      (e.source_ip ?? e.host ?? "–")
                    )}
                  </td>
                  <td class="msg">
                    {e.kind === "trap" ? (
                      <>
                        <strong data-testid="trap-name" title={e.trap_oid ?? undefined}>
                          {trapName ?? e.trap_oid}
                        </strong>{" "}
                        {varbinds.length ? (
                          <button type="button" class="small link" aria-expanded={expanded} aria-controls={`vb-${e.id}`} onClick={() => toggle(e.id)}>
                            {expanded ? "Hide" : "Show"} {varbinds.length} varbind{varbinds.length === 1 ? "" : "s"}
                          </button>
                        ) : null}
                      </>
                    ) : (
                      <>
                        {e.host && e.node_id ? <span class="muted">{e.host} </span> : null}
                        {e.message}
                      </>
                    )}
                  </td>
                </tr>
                {expanded ? (
                  <tr class="varbinds" id={`vb-${e.id}`}>
                    <td colSpan={5}>
                      <table data-testid="varbinds">
                        <thead>
                          <tr>
                            <th scope="col">Object</th>
                            <th scope="col">Type</th>
                            <th scope="col">Value</th>
                          </tr>
                        </thead>
                        <tbody>
                          {varbinds.map((v, i) => (
                            <tr key={i}>
                              <td title={v.oid}>{nameOf(v.oid) ?? v.oid}</td>
                              <td>{v.type ?? ""}</td>
                              <td>{v.value === null || v.value === undefined ? "–" : String(v.value)}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
