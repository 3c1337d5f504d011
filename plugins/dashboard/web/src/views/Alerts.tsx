// The alert console (#/alerts): the active list with filters (severity, state, ack, folder, text), sorting, bulk
// selection (ack with a note), and per-row ack, mute and maintenance. And #/maintenance: mutes and maintenance windows,
// listed, edited and deleted.
import { useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import {
  AckDialog,
  type Active,
  canMaintain,
  DURATIONS,
  fromLocalInput,
  MaintenanceDialog,
  type MaintenanceWindow,
  Modal,
  type Mute,
  MuteDialog,
  toLocalInput,
} from "../alertActions.tsx";
import { Picker } from "../pickers.tsx";
import { api, can, throttled, unwrapped, useLive, useLoad, useSession } from "../session.tsx";
import { Badge, ErrorNote, fmtTime, Section } from "../ui.tsx";

const SEVERITY_RANK: Record<string, number> = { critical: 3, warning: 2, info: 1 };
const SORTS: Record<string, [string, (a: Active, b: Active) => number]> = {
  severity: ["Severity, then newest", (a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.fired_at.localeCompare(a.fired_at)],
  newest: ["Newest first", (a, b) => b.fired_at.localeCompare(a.fired_at)],
  oldest: ["Oldest first", (a, b) => a.fired_at.localeCompare(b.fired_at)],
  node: ["Node name", (a, b) => (a.node_name ?? a.subject_name ?? "").localeCompare(b.node_name ?? b.subject_name ?? "")],
  title: ["Alert title", (a, b) => (a.title ?? a.metric ?? "").localeCompare(b.title ?? b.metric ?? "")],
};

/** Nullable object fields come out of the generated schema as `{}`: read them with their real type. */
const ackOf = (a: Active) => a.acked as Schemas["AckState"] | null;
const recurrenceOf = (w: MaintenanceWindow) => w.recurrence as Schemas["RecurrenceView"] | null;
const subjectOf = (a: Active) => a.node_name ?? a.subject_name ?? a.subject_kind;
const muteKey = (node: string, metric: string) => `${node}|${metric}`;
/** The metric a mute of this alert names (liveness alerts are muted by `reachable`). */
const muteMetricOf = (a: Active) => a.metric ?? "reachable";

export function AlertsConsole() {
  const session = useSession();
  const [folder, setFolder] = useState<string | null>(null);
  const alerts = useLoad(() => unwrapped(api.GET("/api/v1/alerts", { params: { query: folder ? { folder_id: folder } : {} } })), [session.signedIn, folder]);
  const mutes = useLoad(() => unwrapped(api.GET("/api/v1/mutes", { params: { query: { limit: 1000 } } })), [session.signedIn]);
  const [severity, setSeverity] = useState("");
  const [state, setState] = useState("");
  const [ack, setAck] = useState("");
  const [text, setText] = useState("");
  const [sort, setSort] = useState("severity");
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState<{ kind: "ack"; alerts: Active[] } | { kind: "mute" | "maintenance"; alert: Active } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const reload = useMemo(
    () =>
      throttled(() => {
        alerts.reload();
        mutes.reload();
      }),
    [folder],
  );
  useLive(["alerts.fired", "alerts.resolved", "alerts.ack"], () => reload(), [folder]);

  const all = alerts.data ?? [];
  const muted = new Map((mutes.data ?? []).map((m) => [muteKey(m.node_id, m.metric_name), m]));
  const states = [...new Set(all.map((a) => a.state))].sort();
  const needle = text.trim().toLowerCase();
  const shown = all
    .filter((a) => !severity || a.severity === severity)
    .filter((a) => !state || a.state === state)
    .filter((a) => {
      const isMuted = a.node ? muted.has(muteKey(a.node, muteMetricOf(a))) : false;
      return !ack || (ack === "acked" ? Boolean(a.acked) : ack === "unacked" ? !a.acked : isMuted);
    })
    .filter(
      (a) =>
        !needle ||
        [a.title, a.metric, a.node_name, a.subject_name, a.if_name, a.row_name, ackOf(a)?.note, ackOf(a)?.by].some((t) => t?.toLowerCase().includes(needle)),
    )
    .sort(SORTS[sort][1]);
  const chosen = shown.filter((a) => selected.has(a.id));
  const writer = can("AckAlerts");
  const toggle = (id: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const clearAcks = async (list: Active[]) => {
    setMessage(null);
    try {
      const res = await unwrapped(api.POST("/api/v1/alerts/ack/bulk", { body: { ids: list.map((a) => a.id), clear: true } }));
      setMessage(`Cleared ${res.cleared} ack(s).`);
      reload();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const done = (what: string) => () => {
    setSelected(new Set());
    setMessage(what);
    reload();
  };

  return (
    <div class="console-alerts">
      <Section title="Active alerts">
        <form class="filters" role="search" aria-label="Filter alerts" onSubmit={(e) => e.preventDefault()}>
          <label>
            Severity{" "}
            <select value={severity} aria-label="Severity" onChange={(e) => setSeverity((e.target as HTMLSelectElement).value)}>
              <option value="">any</option>
              {["critical", "warning", "info"].map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            State{" "}
            <select value={state} aria-label="State" onChange={(e) => setState((e.target as HTMLSelectElement).value)}>
              <option value="">any</option>
              {states.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            Ack{" "}
            <select value={ack} aria-label="Ack state" onChange={(e) => setAck((e.target as HTMLSelectElement).value)}>
              <option value="">any</option>
              <option value="unacked">not acknowledged</option>
              <option value="acked">acknowledged</option>
              <option value="muted">muted</option>
            </select>
          </label>
          <div class="filter-folder">
            <span aria-hidden="true">Folder</span>
            <Picker id="alerts-folder" kind="folder" label="Folder" value={folder} onChange={(id) => setFolder(id)} />
          </div>
          <label>
            Text{" "}
            <input
              type="search"
              value={text}
              placeholder="title, node, interface, note"
              aria-label="Text"
              onInput={(e) => setText((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            Sort{" "}
            <select value={sort} aria-label="Sort by" onChange={(e) => setSort((e.target as HTMLSelectElement).value)}>
              {Object.entries(SORTS).map(([k, [label]]) => (
                <option key={k} value={k}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        </form>
        <ErrorNote error={alerts.error} />
        <p class="muted" data-testid="alert-count" aria-live="polite">
          Showing {shown.length} of {all.length}
          {chosen.length ? `; ${chosen.length} selected` : ""}
        </p>
        {writer && chosen.length ? (
          <div class="actions bulk-bar" data-testid="bulk-bar">
            <button type="button" onClick={() => setDialog({ kind: "ack", alerts: chosen })}>
              Acknowledge {chosen.length} selected…
            </button>
            <button type="button" class="small" onClick={() => void clearAcks(chosen)}>
              Clear their acks
            </button>
            <button type="button" class="small" onClick={() => setSelected(new Set())}>
              Unselect
            </button>
          </div>
        ) : null}
        {message ? (
          <p class="ok" role="status">
            {message}
          </p>
        ) : null}
        {shown.length === 0 ? (
          <p class="muted">{all.length ? "No alert matches these filters." : "No active alerts."}</p>
        ) : (
          <div class="table-wrap">
            <table class="alerts console" data-testid="console-alerts">
              <thead>
                <tr>
                  {writer ? (
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Select every alert shown"
                        checked={chosen.length > 0 && chosen.length === shown.length}
                        onChange={(e) => setSelected((e.target as HTMLInputElement).checked ? new Set(shown.map((a) => a.id)) : new Set())}
                      />
                    </th>
                  ) : null}
                  <th scope="col">Severity</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Alert</th>
                  <th scope="col">Since</th>
                  <th scope="col">Ack</th>
                  {writer ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {shown.map((a) => {
                  const mute = a.node ? muted.get(muteKey(a.node, muteMetricOf(a))) : undefined;
                  const label = a.title ?? a.metric ?? "alert";
                  const acked = ackOf(a);
                  return (
                    <tr key={a.id} data-alert={a.id} data-node={a.node ?? ""} data-severity={a.severity} class={a.acked ? "acked" : ""}>
                      {writer ? (
                        <td>
                          <input
                            type="checkbox"
                            aria-label={`Select ${label}`}
                            checked={selected.has(a.id)}
                            onChange={(e) => toggle(a.id, (e.target as HTMLInputElement).checked)}
                          />
                        </td>
                      ) : null}
                      <td>
                        <Badge value={a.severity} /> {a.state !== a.severity ? <Badge value={a.state} /> : null}
                      </td>
                      <td>{a.node ? <a href={`#/node/${a.node}`}>{subjectOf(a)}</a> : subjectOf(a)}</td>
                      <td data-testid="alert-title">
                        {label}
                        {mute ? (
                          <span class="chip muted-chip" data-testid="muted">
                            muted until {fmtTime(mute.until)}
                          </span>
                        ) : null}
                      </td>
                      <td>
                        <time>{fmtTime(a.fired_at)}</time>
                      </td>
                      <td>
                        {acked ? (
                          <span class="ack-state" data-testid="acked">
                            acked by {acked.by} <time class="muted">{fmtTime(acked.at)}</time>
                            {acked.note ? <q data-testid="ack-note">{acked.note}</q> : null}
                          </span>
                        ) : (
                          <span class="muted">–</span>
                        )}
                      </td>
                      {writer ? (
                        <td class="row-actions">
                          {a.acked ? (
                            <button type="button" class="small" aria-label={`Clear ack of ${label}`} onClick={() => void clearAcks([a])}>
                              Unack
                            </button>
                          ) : (
                            <button type="button" aria-label={`Acknowledge ${label}`} onClick={() => setDialog({ kind: "ack", alerts: [a] })}>
                              Ack…
                            </button>
                          )}
                          {a.node ? (
                            <button type="button" class="small" aria-label={`Mute ${label}`} onClick={() => setDialog({ kind: "mute", alert: a })}>
                              Mute…
                            </button>
                          ) : null}
                          {a.node && canMaintain() ? (
                            <button
                              type="button"
                              class="small"
                              aria-label={`Schedule maintenance for ${subjectOf(a)}`}
                              onClick={() => setDialog({ kind: "maintenance", alert: a })}
                            >
                              Maintenance…
                            </button>
                          ) : null}
                        </td>
                      ) : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      <AlertHistory folder={folder} />
      {dialog?.kind === "ack" ? (
        <AckDialog alerts={dialog.alerts} onClose={() => setDialog(null)} onDone={done(`Acknowledged ${dialog.alerts.length} alert(s).`)} />
      ) : null}
      {dialog?.kind === "mute" ? (
        <MuteDialog
          node={dialog.alert.node!}
          nodeName={subjectOf(dialog.alert)}
          metric={muteMetricOf(dialog.alert)}
          alertingMetrics={[...new Set(all.filter((a) => a.node === dialog.alert.node).map(muteMetricOf))]}
          onClose={() => setDialog(null)}
          onDone={done("Muted.")}
        />
      ) : null}
      {dialog?.kind === "maintenance" ? (
        <MaintenanceDialog
          nodes={[{ id: dialog.alert.node!, name: subjectOf(dialog.alert) }]}
          onClose={() => setDialog(null)}
          onDone={done("Maintenance scheduled.")}
        />
      ) : null}
    </div>
  );
}

/** Recent fires and clears (of the chosen folder), each with its time (a clear's own time) and its ack with the note. */
function AlertHistory({ folder }: { folder: string | null }) {
  const session = useSession();
  const history = useLoad(
    () => unwrapped(api.GET("/api/v1/alerts/history", { params: { query: { limit: 50, ...(folder ? { group_id: folder } : {}) } } })),
    [session.signedIn, folder],
  );
  const reload = useMemo(() => throttled(() => history.reload()), [folder]);
  useLive(["alerts.fired", "alerts.resolved", "alerts.ack"], () => reload(), [folder]);
  return (
    <Section title="Alert history">
      <ErrorNote error={history.error} />
      <ol class="transitions" data-testid="alert-history">
        {(history.data ?? []).map((h) => {
          const acked = h.acked as Schemas["AckState"] | null;
          return (
            <li key={h.id} data-history={h.id}>
              <Badge value={h.resolved ? "resolved" : h.severity} /> {h.node ? <a href={`#/node/${h.node}`}>{h.title ?? h.metric}</a> : (h.title ?? h.metric)}{" "}
              <time class="muted">{fmtTime(h.resolved ? h.recorded_at : h.at_unix_ms)}</time>
              {acked ? (
                <span class="ack-state muted" data-testid="history-ack">
                  {" "}
                  acked by {acked.by}
                  {acked.note ? <q>{acked.note}</q> : null}
                </span>
              ) : null}
            </li>
          );
        })}
      </ol>
    </Section>
  );
}

/** #/maintenance: the active mutes and the maintenance windows, each editable and deletable. */
export function MutesMaintenance() {
  const session = useSession();
  const mutes = useLoad(() => unwrapped(api.GET("/api/v1/mutes", { params: { query: { limit: 1000 } } })), [session.signedIn]);
  const windows = useLoad(() => unwrapped(api.GET("/api/v1/maintenance-windows", { params: { query: { limit: 1000 } } })), [session.signedIn]);
  const active = useLoad(() => unwrapped(api.GET("/api/v1/maintenance-windows/active", { params: { query: {} } })), [session.signedIn]);
  const [editMute, setEditMute] = useState<Mute | null>(null);
  const [editWindow, setEditWindow] = useState<{ w: MaintenanceWindow; nodes: { id: string; name: string }[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const openNow = new Set((active.data ?? []).map((w) => w.id));
  const run = async (fn: () => Promise<unknown>, after: () => void) => {
    setError(null);
    try {
      await fn();
      after();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const editNodes = async (w: MaintenanceWindow) => {
    const nodes = await Promise.all(
      w.target_ids.map(async (id) => ({
        id,
        name: (await unwrapped(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } })).catch(() => ({ name: id }))).name,
      })),
    );
    setEditWindow({ w, nodes });
  };
  return (
    <div class="grid console-alerts">
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <Section title="Mutes">
        <ErrorNote error={mutes.error} />
        {mutes.data?.length ? (
          <div class="table-wrap">
            <table data-testid="mutes">
              <thead>
                <tr>
                  <th scope="col">Node</th>
                  <th scope="col">Metric</th>
                  <th scope="col">Until</th>
                  <th scope="col">Reason</th>
                  <th scope="col">By</th>
                  {can("AckAlerts") ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {mutes.data.map((m) => (
                  <tr key={m.id} data-mute={m.id} data-node={m.node_id}>
                    <td>
                      <a href={`#/node/${m.node_id}`}>{m.node_name ?? m.node_id}</a>
                    </td>
                    <td>
                      <code>{m.metric_name}</code>
                    </td>
                    <td>
                      <time>{fmtTime(m.until)}</time>
                    </td>
                    <td>{m.reason}</td>
                    <td>{m.created_by}</td>
                    {can("AckAlerts") ? (
                      <td class="row-actions">
                        <button type="button" class="small" aria-label={`Edit mute of ${m.metric_name} on ${m.node_name}`} onClick={() => setEditMute(m)}>
                          Edit…
                        </button>
                        <button
                          type="button"
                          class="small danger"
                          aria-label={`End mute of ${m.metric_name} on ${m.node_name}`}
                          onClick={() => void run(() => unwrapped(api.DELETE("/api/v1/mutes/{id}", { params: { path: { id: m.id } } })), mutes.reload)}
                        >
                          End now
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p class="muted">Nothing is muted.</p>
        )}
      </Section>
      <Section title="Maintenance windows">
        <ErrorNote error={windows.error} />
        {windows.data?.length ? (
          <div class="table-wrap">
            <table data-testid="maintenance-windows">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Targets</th>
                  <th scope="col">When</th>
                  <th scope="col">By</th>
                  {canMaintain() ? <th scope="col">Actions</th> : null}
                </tr>
              </thead>
              <tbody>
                {windows.data.map((w) => (
                  <tr key={w.id} data-window={w.id}>
                    <td>
                      {w.name} {openNow.has(w.id) ? <Badge value="maintenance" /> : null}
                    </td>
                    <td>
                      {w.target_ids.length} {w.target_kind}
                      {w.target_ids.length === 1 ? "" : "s"}
                    </td>
                    <td>
                      {recurrenceOf(w) ? (
                        <>
                          {recurrenceOf(w)!.kind} {recurrenceOf(w)!.weekdays?.join(",") ?? ""} {recurrenceOf(w)!.start} for {recurrenceOf(w)!.duration_mins} min
                          ({recurrenceOf(w)!.time_zone})
                        </>
                      ) : (
                        <>
                          <time>{fmtTime(w.starts_at)}</time> – <time>{fmtTime(w.ends_at)}</time>
                        </>
                      )}
                    </td>
                    <td>{w.created_by}</td>
                    {canMaintain() ? (
                      <td class="row-actions">
                        {!w.recurrence && w.target_kind === "node" ? (
                          <button type="button" class="small" aria-label={`Edit ${w.name}`} onClick={() => void editNodes(w)}>
                            Edit…
                          </button>
                        ) : null}
                        <button
                          type="button"
                          class="small danger"
                          aria-label={`Delete ${w.name}`}
                          onClick={() =>
                            void run(
                              () => unwrapped(api.DELETE("/api/v1/maintenance-windows/{id}", { params: { path: { id: w.id } } })),
                              () => {
                                windows.reload();
                                active.reload();
                              },
                            )
                          }
                        >
                          Delete
                        </button>
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <p class="muted">No maintenance windows.</p>
        )}
      </Section>
      {editMute ? <MuteEditDialog mute={editMute} onClose={() => setEditMute(null)} onDone={mutes.reload} /> : null}
      {editWindow ? (
        <MaintenanceDialog
          nodes={editWindow.nodes}
          existing={editWindow.w}
          onClose={() => setEditWindow(null)}
          onDone={() => {
            windows.reload();
            active.reload();
          }}
        />
      ) : null}
    </div>
  );
}

/** Moves a mute's end or changes its reason (PATCH /mutes/{id}). */
function MuteEditDialog({ mute, onClose, onDone }: { mute: Mute; onClose: () => void; onDone: () => void }) {
  const [minutes, setMinutes] = useState("custom");
  const [until, setUntil] = useState(toLocalInput(new Date(mute.until)));
  const [reason, setReason] = useState(mute.reason);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const end = minutes === "custom" ? fromLocalInput(until) : new Date(Date.now() + Number(minutes) * 60_000).toISOString();
      const body: Schemas["MuteUpdate"] = { reason, ...(end && end !== new Date(mute.until).toISOString() ? { until: end } : {}) };
      await unwrapped(api.PATCH("/api/v1/mutes/{id}", { params: { path: { id: mute.id } }, body }));
      onDone();
      onClose();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={`Edit mute of ${mute.metric_name} on ${mute.node_name ?? mute.node_id}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for="mute-edit-for">Until</label>
          <select id="mute-edit-for" value={minutes} onChange={(e) => setMinutes((e.target as HTMLSelectElement).value)}>
            <option value="custom">this time</option>
            {DURATIONS.map(([label, m]) => (
              <option key={m} value={String(m)}>
                {label} from now
              </option>
            ))}
          </select>
          {minutes === "custom" ? (
            <input type="datetime-local" aria-label="Mute until" value={until} onInput={(e) => setUntil((e.target as HTMLInputElement).value)} />
          ) : null}
        </div>
        <div class="field">
          <label for="mute-edit-reason">Reason</label>
          <input id="mute-edit-reason" maxLength={1000} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
        </div>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Save
          </button>
          <button type="button" class="small" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
