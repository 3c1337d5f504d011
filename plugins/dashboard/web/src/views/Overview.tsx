import { useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import type { AlertTransitionEvent } from "../../../../../clients/typescript/src/realtime.ts";
import { api, can, throttled, unwrapped, useLive, useLoad, useSession } from "../session.tsx";
import { graphHref } from "../lazy.tsx";
import { Badge, ErrorNote, fmtTime, Heatmap, Section } from "../ui.tsx";
import { AgentProblems } from "../inventory.tsx";

type Active = Schemas["ActiveAlertView"];
const SEVERITIES = ["critical", "warning", "info"] as const;

export function Overview() {
  const session = useSession();
  const alerts = useLoad(() => unwrapped(api.GET("/api/v1/alerts")), [session.signedIn]);
  const transitions = useLoad(() => unwrapped(api.GET("/api/v1/alerts/transitions", { params: { query: { limit: 12 } } })), [session.signedIn]);
  const calendar = useLoad(() => unwrapped(api.GET("/api/v1/alerts/calendar", { params: { query: { days: 28 } } })), [session.signedIn]);
  const [feed, setFeed] = useState<AlertTransitionEvent[]>([]);
  const reload = useMemo(
    () =>
      throttled(() => {
        alerts.reload();
        transitions.reload();
      }),
    [],
  );
  useLive(["alerts.fired", "alerts.resolved"], (t) => {
    setFeed((f) => [t as AlertTransitionEvent, ...f].slice(0, 20));
    reload();
  });
  useLive(["alerts.ack"], () => reload());

  const list = (alerts.data ?? []) as Active[];
  const counts = Object.fromEntries(SEVERITIES.map((s) => [s, list.filter((a) => a.severity === s).length]));
  return (
    <div class="grid">
      <Section title="Active alerts">
        <ul class="counts" aria-label="Active alerts by severity">
          {SEVERITIES.map((s) => (
            <li key={s} class={`count sev-${s}`} data-testid={`count-${s}`}>
              <strong>{counts[s]}</strong> {s}
            </li>
          ))}
        </ul>
        {alerts.error?.status === 401 ? null : <ErrorNote error={alerts.error} />}
        {alerts.error?.status === 401 ? <PublicFeed feed={feed} /> : <AlertTable alerts={list} onAcked={reload} />}
      </Section>
      <AgentProblems />
      <Section title="Recent transitions">
        <ErrorNote error={transitions.error} />
        <ol class="transitions">
          {(transitions.data ?? []).map((t) => (
            <li key={t.id}>
              <Badge value={t.resolved ? "resolved" : t.severity} />{" "}
              <a href={t.node ? `#/node/${t.node}` : undefined}>{t.node_name ?? t.subject_name ?? "—"}</a> {t.title ?? t.metric}{" "}
              <time class="muted" data-testid="transition-time">
                {fmtTime(t.resolved ? t.recorded_at : t.at_unix_ms)}
              </time>
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Alert calendar (fires, last 28 days)">
        <ErrorNote error={calendar.error} />
        {calendar.data ? <Heatmap cells={calendar.data} /> : null}
      </Section>
    </div>
  );
}

function PublicFeed({ feed }: { feed: AlertTransitionEvent[] }) {
  return (
    <>
      <p class="muted">Live feed of alert transitions since this page opened.</p>
      <ol class="transitions" data-testid="live-feed">
        {feed.map((t) => (
          <li key={t.id}>
            <Badge value={t.resolved ? "resolved" : t.severity} /> {t.title ?? t.metric}
          </li>
        ))}
      </ol>
    </>
  );
}

function AlertTable({ alerts, onAcked }: { alerts: Active[]; onAcked: () => void }) {
  // Root causes list their symptoms (alerts of nodes unreachable behind them) folded under them; a click unfolds.
  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (key: string) =>
    setOpen((o) => {
      const n = new Set(o);
      if (n.has(key)) n.delete(key);
      else n.add(key);
      return n;
    });
  const [error, setError] = useState<string | null>(null);
  if (!alerts.length) return <p class="muted">No active alerts.</p>;
  const ack = async (a: Active, clear: boolean) => {
    setError(null);
    try {
      await unwrapped(
        api.POST("/api/v1/alerts/ack", {
          body: a.node
            ? { node: a.node, check: a.check, ...(a.ifindex !== null ? { ifindex: a.ifindex } : {}), ...(clear ? { clear: true } : {}) }
            : { subject: a.subject_name ?? "", ...(clear ? { clear: true } : {}) },
        }),
      );
      onAcked();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="table-wrap">
        <table class="alerts">
          <thead>
            <tr>
              <th scope="col">Severity</th>
              <th scope="col">Subject</th>
              <th scope="col">Alert</th>
              <th scope="col">Since</th>
              <th scope="col">Ack</th>
            </tr>
          </thead>
          <tbody>
            {folded(alerts, open).map(({ alert: a, symptoms, symptom }) => {
              const acked = a.acked as Schemas["AckState"] | null;
              return (
                <tr
                  key={a.id}
                  data-alert={a.id}
                  data-node={a.node ?? ""}
                  data-symptom-of={symptom ? symptomOf(a)!.incident_key : undefined}
                  class={[acked ? "acked" : "", symptom ? "symptom" : ""].join(" ").trim()}
                >
                  <td>
                    <Badge value={a.severity} />
                  </td>
                  <td>{a.node ? <a href={`#/node/${a.node}`}>{a.node_name ?? a.node}</a> : (a.subject_name ?? a.subject_kind)}</td>
                  <td>
                    {a.title ?? a.metric} {symptom ? <span class="muted">(behind {symptomOf(a)!.node_name ?? "its upstream"}) </span> : null}
                    {symptoms ? (
                      <button
                        type="button"
                        class="small link"
                        aria-expanded={open.has(a.incident_key)}
                        data-testid="symptoms-toggle"
                        onClick={() => toggle(a.incident_key)}
                      >
                        {symptoms} {symptoms === 1 ? "node" : "nodes"} behind it
                      </button>
                    ) : null}{" "}
                    {a.node ? (
                      <a class="graph-link" href={graphHref(a.node, a.metric, a.ifindex, a.fired_at)} aria-label={`Graph of ${a.title ?? a.metric ?? "alert"}`}>
                        graph
                      </a>
                    ) : null}
                  </td>
                  <td>
                    <time>{fmtTime(a.fired_at)}</time>
                  </td>
                  <td>
                    {acked ? (
                      <span class="ack-state" data-testid="acked">
                        acked by {acked.by}
                      </span>
                    ) : null}{" "}
                    {can("AckAlerts") ? (
                      <button
                        type="button"
                        onClick={() => void ack(a, Boolean(acked))}
                        aria-label={`${acked ? "Clear ack of" : "Acknowledge"} ${a.title ?? a.metric ?? "alert"}`}
                      >
                        {acked ? "Unack" : "Ack"}
                      </button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

type SymptomRef = { incident_key: string; node: string; node_name: string | null };
const symptomOf = (a: Active): SymptomRef | null => (a.symptom_of as SymptomRef | null | undefined) ?? null;

/**
 * The alerts in list order with each root cause's symptoms moved right under it: shown when the cause is unfolded,
 * counted on its row otherwise. A symptom whose cause is not in the list (cleared, or outside the caller's folders)
 * stays where it was.
 */
function folded(alerts: Active[], open: Set<string>): { alert: Active; symptoms: number; symptom: boolean }[] {
  const keys = new Set(alerts.map((a) => a.incident_key));
  const under = new Map<string, Active[]>();
  for (const a of alerts) {
    const cause = symptomOf(a)?.incident_key;
    if (cause && keys.has(cause) && cause !== a.incident_key) under.set(cause, [...(under.get(cause) ?? []), a]);
  }
  const out: { alert: Active; symptoms: number; symptom: boolean }[] = [];
  for (const a of alerts) {
    const cause = symptomOf(a)?.incident_key;
    if (cause && under.get(cause)?.includes(a)) continue;
    const mine = under.get(a.incident_key) ?? [];
    out.push({ alert: a, symptoms: mine.length, symptom: false });
    if (open.has(a.incident_key)) for (const x of mine) out.push({ alert: x, symptoms: 0, symptom: true });
  }
  return out;
}
