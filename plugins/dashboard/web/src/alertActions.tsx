// Operator actions on alerts and nodes, shared by the alert console (views/Alerts.tsx) and the node view: a modal
// dialog, ack with a note, mute for a period, schedule maintenance, and the node view's "Mute / Maintenance" card.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Schemas } from "../../../../clients/typescript/src/index.ts";
import { api, can, unwrapped, useLive, useLoad, useSession } from "./session.tsx";
import { Badge, ErrorNote, fmtTime, Section } from "./ui.tsx";

export type Active = Schemas["ActiveAlertView"];
export type Mute = Schemas["MuteView"];
export type MaintenanceWindow = Schemas["MaintenanceWindowView"];

/** Maintenance windows need ManageMaintenance, which operators and admins hold (the same roles as ManageConfig). */
export const canMaintain = () => can("ManageConfig");

/** Durations offered for mutes and maintenance windows. */
export const DURATIONS: [string, number][] = [
  ["1 hour", 60],
  ["4 hours", 240],
  ["1 day", 1440],
  ["1 week", 10080],
];

/** A Date as the value of an <input type="datetime-local"> (local time, minutes). */
export function toLocalInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** An <input type="datetime-local"> value as RFC 3339 (UTC), or null when empty or unreadable. */
export function fromLocalInput(v: string): string | null {
  if (!v) return null;
  const ms = new Date(v).getTime();
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** A modal dialog: labelled by its title, Escape or Cancel closes it, focus starts on its first field. */
export function Modal({ title, onClose, children, testId }: { title: string; onClose: () => void; children: ComponentChildren; testId?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const titleId = `modal-${title.replace(/\W+/g, "-").toLowerCase()}`;
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    ref.current?.querySelector<HTMLElement>("input, textarea, select, button")?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    addEventListener("keydown", onKey);
    return () => {
      removeEventListener("keydown", onKey);
      before?.focus?.();
    };
  }, []);
  return (
    <div class="modal-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div ref={ref} class="card modal" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid={testId}>
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
    </div>
  );
}

/** Submit and Cancel buttons with the error of the last attempt. */
function DialogActions({ busy, error, label, onClose }: { busy: boolean; error: string | null; label: string; onClose: () => void }) {
  return (
    <>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {label}
        </button>
        <button type="button" class="small" onClick={onClose}>
          Cancel
        </button>
      </div>
    </>
  );
}

/** Runs `fn` with busy and error state for a dialog's submit. */
function useSubmit(fn: () => Promise<void>, onDone: () => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await fn();
      onDone();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

/** Acknowledges one or several active alerts with a note (POST /alerts/ack/bulk, one request for all). */
export function AckDialog({ alerts, onClose, onDone }: { alerts: Active[]; onClose: () => void; onDone: () => void }) {
  const [note, setNote] = useState("");
  const { busy, error, submit } = useSubmit(
    async () => {
      const res = await unwrapped(api.POST("/api/v1/alerts/ack/bulk", { body: { ids: alerts.map((a) => a.id), ...(note.trim() ? { note } : {}) } }));
      if (res.not_found > 0 && res.acked === 0) throw new Error("These alerts are no longer open.");
    },
    () => {
      onDone();
      onClose();
    },
  );
  const title = alerts.length === 1 ? `Acknowledge: ${alerts[0].title ?? alerts[0].metric ?? "alert"}` : `Acknowledge ${alerts.length} alerts`;
  return (
    <Modal title={title} onClose={onClose} testId="ack-dialog">
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for="ack-note">Note (optional)</label>
          <textarea id="ack-note" rows={3} maxLength={2000} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} />
          <small class="muted">Shown with the ack to everyone who sees the alert, and in its history.</small>
        </div>
        <DialogActions busy={busy} error={error} label="Acknowledge" onClose={onClose} />
      </form>
    </Modal>
  );
}

/**
 * Mutes a node's notifications for a period: one metric (the alert's), or the whole node (every metric alerting on it
 * now, and reachability). One POST /mutes/bulk per metric.
 */
export function MuteDialog({
  node,
  nodeName,
  metric,
  alertingMetrics,
  onClose,
  onDone,
}: {
  node: string;
  nodeName: string;
  metric: string | null;
  alertingMetrics: string[];
  onClose: () => void;
  onDone: () => void;
}) {
  const [what, setWhat] = useState<"metric" | "node">(metric ? "metric" : "node");
  const [custom, setCustom] = useState(metric ?? "");
  const [minutes, setMinutes] = useState("60");
  const [until, setUntil] = useState(toLocalInput(new Date(Date.now() + 3600_000)));
  const [reason, setReason] = useState("");
  const { busy, error, submit } = useSubmit(
    async () => {
      const end = minutes === "custom" ? fromLocalInput(until) : new Date(Date.now() + Number(minutes) * 60_000).toISOString();
      if (!end) throw new Error("Choose when the mute ends.");
      const metrics = what === "node" ? [...new Set([...alertingMetrics, "reachable"])] : [custom.trim()];
      if (!metrics[0]) throw new Error("Name the metric to mute.");
      for (const m of metrics) {
        await unwrapped(api.POST("/api/v1/mutes/bulk", { body: { node_ids: [node], metric_name: m, reason: reason || "muted from the console", until: end } }));
      }
    },
    () => {
      onDone();
      onClose();
    },
  );
  return (
    <Modal title={`Mute ${nodeName}`} onClose={onClose} testId="mute-dialog">
      <form class="form" onSubmit={submit}>
        <fieldset class="field">
          <legend>What</legend>
          <label>
            <input type="radio" name="mute-what" checked={what === "metric"} onChange={() => setWhat("metric")} /> One metric
          </label>
          {what === "metric" ? (
            <input aria-label="Metric" value={custom} placeholder="if_in_bps" onInput={(e) => setCustom((e.target as HTMLInputElement).value)} />
          ) : null}
          <label>
            <input type="radio" name="mute-what" checked={what === "node"} onChange={() => setWhat("node")} /> The whole node (
            {[...new Set([...alertingMetrics, "reachable"])].join(", ")})
          </label>
        </fieldset>
        <DurationField id="mute" minutes={minutes} setMinutes={setMinutes} until={until} setUntil={setUntil} />
        <div class="field">
          <label for="mute-reason">Reason</label>
          <input id="mute-reason" maxLength={1000} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
        </div>
        <small class="muted">Transitions are still recorded in history; only notifications are held back.</small>
        <DialogActions busy={busy} error={error} label="Mute" onClose={onClose} />
      </form>
    </Modal>
  );
}

/** A duration preset, or a custom end time. */
function DurationField({
  id,
  minutes,
  setMinutes,
  until,
  setUntil,
}: {
  id: string;
  minutes: string;
  setMinutes: (v: string) => void;
  until: string;
  setUntil: (v: string) => void;
}) {
  return (
    <div class="field">
      <label for={`${id}-for`}>For</label>
      <select id={`${id}-for`} value={minutes} onChange={(e) => setMinutes((e.target as HTMLSelectElement).value)}>
        {DURATIONS.map(([label, m]) => (
          <option key={m} value={String(m)}>
            {label}
          </option>
        ))}
        <option value="custom">until…</option>
      </select>
      {minutes === "custom" ? (
        <input type="datetime-local" aria-label="Until" value={until} onInput={(e) => setUntil((e.target as HTMLInputElement).value)} />
      ) : null}
    </div>
  );
}

/** Creates (or, given `existing`, replaces) a one-off maintenance window for nodes. */
export function MaintenanceDialog({
  nodes,
  existing,
  onClose,
  onDone,
}: {
  nodes: { id: string; name: string }[];
  existing?: MaintenanceWindow;
  onClose: () => void;
  onDone: () => void;
}) {
  const [name, setName] = useState(existing?.name ?? `Maintenance of ${nodes.map((n) => n.name).join(", ")}`);
  const [start, setStart] = useState(toLocalInput(existing?.starts_at ? new Date(existing.starts_at) : new Date()));
  const [end, setEnd] = useState(toLocalInput(existing?.ends_at ? new Date(existing.ends_at) : new Date(Date.now() + 2 * 3600_000)));
  const { busy, error, submit } = useSubmit(
    async () => {
      const starts_at = fromLocalInput(start);
      const ends_at = fromLocalInput(end);
      if (!starts_at || !ends_at) throw new Error("Choose a start and an end.");
      const body = { name, target_kind: "node" as const, target_ids: nodes.map((n) => n.id), starts_at, ends_at };
      if (existing) await unwrapped(api.PUT("/api/v1/maintenance-windows/{id}", { params: { path: { id: existing.id } }, body }));
      else await unwrapped(api.POST("/api/v1/maintenance-windows", { body }));
    },
    () => {
      onDone();
      onClose();
    },
  );
  return (
    <Modal title={existing ? `Edit maintenance window` : `Schedule maintenance`} onClose={onClose} testId="maintenance-dialog">
      <form class="form" onSubmit={submit}>
        <p class="muted">Nodes: {nodes.map((n) => n.name).join(", ")}. Inside the window they show "maintenance" and notify nobody.</p>
        <div class="field">
          <label for="mw-name">Name</label>
          <input id="mw-name" maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required />
        </div>
        <div class="field">
          <label for="mw-start">Starts</label>
          <input id="mw-start" type="datetime-local" value={start} onInput={(e) => setStart((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="mw-end">Ends</label>
          <input id="mw-end" type="datetime-local" value={end} onInput={(e) => setEnd((e.target as HTMLInputElement).value)} />
        </div>
        <DialogActions busy={busy} error={error} label={existing ? "Save" : "Schedule"} onClose={onClose} />
      </form>
    </Modal>
  );
}

/**
 * The node view's "Mute / Maintenance" card: the node's live state, its active mutes and maintenance windows, and
 * (operators, admins) buttons to mute it or schedule maintenance.
 */
export function NodeAlertActions({ id }: { id: string }) {
  const session = useSession();
  const node = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } })), [id]);
  const mutes = useLoad(() => unwrapped(api.GET("/api/v1/mutes", { params: { query: { node_id: id, limit: 1000 } } })), [id, session.signedIn]);
  const windows = useLoad(() => unwrapped(api.GET("/api/v1/maintenance-windows/active", { params: { query: {} } })), [id, session.signedIn]);
  const alerts = useLoad(async () => (await unwrapped(api.GET("/api/v1/alerts"))).filter((a) => a.node === id), [id]);
  const [state, setState] = useState<string | null>(null);
  const [open, setOpen] = useState<"mute" | "maintenance" | null>(null);
  useLive(
    ["alerts.node.state"],
    (c) => {
      const change = c as { node_id: string; state: string };
      if (change.node_id === id) {
        setState(change.state);
        windows.reload();
      }
    },
    [id],
  );
  const n = node.data;
  const mine = (windows.data ?? []).filter((w) => w.target_ids.includes(id) || (n?.group_id ? w.target_ids.includes(n.group_id) : false));
  const reload = () => {
    mutes.reload();
    windows.reload();
  };
  return (
    <Section title="Mute / Maintenance">
      <ErrorNote error={mutes.error ?? windows.error} />
      {state ? (
        <p>
          State: <Badge value={state} />
        </p>
      ) : null}
      {mine.length ? (
        <ul class="rows" data-testid="node-maintenance">
          {mine.map((w) => (
            <li key={w.id}>
              In maintenance: <strong>{w.name}</strong> until <time>{fmtTime((w as Schemas["ActiveMaintenanceWindow"]).active_until)}</time>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No maintenance window is open for this node.</p>
      )}
      {mutes.data?.length ? (
        <ul class="rows" data-testid="node-mutes">
          {mutes.data.map((m) => (
            <li key={m.id}>
              Muted <code>{m.metric_name}</code> until <time>{fmtTime(m.until)}</time> <span class="muted">({m.reason})</span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">Nothing muted.</p>
      )}
      <div class="actions">
        {can("AckAlerts") ? (
          <button type="button" class="small" onClick={() => setOpen("mute")}>
            Mute…
          </button>
        ) : null}
        {canMaintain() ? (
          <button type="button" class="small" onClick={() => setOpen("maintenance")}>
            Schedule maintenance…
          </button>
        ) : null}
      </div>
      {open === "mute" && n ? (
        <MuteDialog
          node={id}
          nodeName={n.name}
          metric={null}
          alertingMetrics={[...new Set((alerts.data ?? []).map((a) => a.metric).filter((m): m is string => Boolean(m) && /^[A-Za-z_]\w*$/.test(m!)))]}
          onClose={() => setOpen(null)}
          onDone={reload}
        />
      ) : null}
      {open === "maintenance" && n ? <MaintenanceDialog nodes={[{ id, name: n.name }]} onClose={() => setOpen(null)} onDone={reload} /> : null}
    </Section>
  );
}
