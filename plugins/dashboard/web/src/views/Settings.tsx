// Settings operators edit most: thresholds, notification channels (with send test), routing rules, event rules.
// Every form sends what was typed; the API's 400 message is shown next to the field it names.
import { useState } from "preact/hooks";
import { api, can, unwrapped, useLoad } from "../session.tsx";
import { ApiForm, ErrorNote, num, Section, str } from "../ui.tsx";

const list = (v: string | boolean | undefined) =>
  typeof v === "string" && v.trim()
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

function Delete({ onDelete, label }: { onDelete: () => Promise<unknown>; label: string }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        class="small danger"
        aria-label={label}
        onClick={() => {
          setError(null);
          onDelete().catch((e: Error) => setError(e.message));
        }}
      >
        Delete
      </button>
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
    </>
  );
}

export function Thresholds() {
  const rules = useLoad(() => unwrapped(api.GET("/api/v1/thresholds", { params: { query: { limit: 200 } } })), []);
  return (
    <div class="grid">
      <Section title="Thresholds">
        <ErrorNote error={rules.error} />
        <div class="table-wrap">
          <table data-testid="thresholds">
            <thead>
              <tr>
                <th scope="col">Metric</th>
                <th scope="col">Scope</th>
                <th scope="col">Warning</th>
                <th scope="col">Critical</th>
                <th scope="col">Dwell</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {(rules.data ?? []).map((r) => (
                <tr key={r.id} data-threshold={r.id}>
                  <td>{r.metric}</td>
                  <td>
                    {r.scope_level} {r.scope_ids.join(", ")}
                  </td>
                  <td class="num">
                    {[r.warning_above !== null ? `> ${r.warning_above}` : "", r.warning_below !== null ? `< ${r.warning_below}` : ""]
                      .filter(Boolean)
                      .join(" ") || "–"}
                  </td>
                  <td class="num">
                    {[r.critical_above !== null ? `> ${r.critical_above}` : "", r.critical_below !== null ? `< ${r.critical_below}` : ""]
                      .filter(Boolean)
                      .join(" ") || "–"}
                  </td>
                  <td class="num">{r.dwell_samples}</td>
                  <td>
                    {can("ManageConfig") ? (
                      <Delete
                        label={`Delete threshold ${r.metric}`}
                        onDelete={() => unwrapped(api.DELETE("/api/v1/thresholds/{id}", { params: { path: { id: r.id } } })).then(rules.reload)}
                      />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
      {can("ManageConfig") ? (
        <Section title="New threshold">
          <ApiForm
            id="threshold-form"
            label="Create threshold"
            initial={{ scope_level: "global", direction: "above", dwell_samples: "1" }}
            fields={[
              { name: "metric", label: "Metric", required: true, placeholder: "if_in_bps" },
              { name: "scope_level", label: "Scope level", type: "select", options: ["global", "profile", "folder", "node", "interface"] },
              { name: "scope_ids", label: "Scope ids (comma-separated)", placeholder: "node uuid, or node uuid:ifindex", help: "Not used by a global rule." },
              { name: "direction", label: "Direction", type: "select", options: ["above", "below"] },
              { name: "warning_above", label: "Warning above", type: "number" },
              { name: "critical_above", label: "Critical above", type: "number" },
              { name: "warning_below", label: "Warning below", type: "number" },
              { name: "critical_below", label: "Critical below", type: "number" },
              { name: "dwell_samples", label: "Dwell samples", type: "number" },
            ]}
            submit={(v) =>
              unwrapped(
                api.POST("/api/v1/thresholds", {
                  body: {
                    metric: String(v.metric ?? ""),
                    scope_level: v.scope_level as "global",
                    direction: v.direction as "above",
                    ...(list(v.scope_ids) ? { scope_ids: list(v.scope_ids) } : {}),
                    warning_above: num(v.warning_above),
                    critical_above: num(v.critical_above),
                    warning_below: num(v.warning_below),
                    critical_below: num(v.critical_below),
                    dwell_samples: num(v.dwell_samples),
                  },
                }),
              )
            }
            onDone={rules.reload}
          />
        </Section>
      ) : null}
    </div>
  );
}

export function Channels() {
  const channels = useLoad(() => unwrapped(api.GET("/api/v1/notification-channels", { params: { query: { limit: 200 } as never } })), []);
  const kinds = useLoad(() => unwrapped(api.GET("/api/v1/notification-channels/kinds")), []);
  const [results, setResults] = useState<Record<string, string>>({});
  const test = async (id: string) => {
    setResults((r) => ({ ...r, [id]: "sending…" }));
    try {
      const res = await unwrapped(api.POST("/api/v1/notification-channels/{id}/test", { params: { path: { id } } }));
      setResults((r) => ({ ...r, [id]: res.delivered ? "delivered" : `failed: ${res.error ?? "no detail"}` }));
    } catch (e) {
      setResults((r) => ({ ...r, [id]: (e as Error).message }));
    }
  };
  const toggle = (id: string, enabled: boolean) =>
    unwrapped(api.PUT("/api/v1/notification-channels/{id}", { params: { path: { id } }, body: { enabled } })).then(channels.reload);
  return (
    <div class="grid">
      <Section title="Notification channels">
        <ErrorNote error={channels.error} />
        <ul class="rows">
          {(channels.data ?? []).map((c) => (
            <li key={c.id} data-channel={c.id}>
              <strong>{c.name}</strong> <span class="muted">{c.kind}</span> {c.enabled ? "enabled" : "disabled"}{" "}
              {can("ManageSystem") ? (
                <>
                  <button type="button" class="small" onClick={() => void test(c.id)}>
                    Send test
                  </button>{" "}
                  <button type="button" class="small" onClick={() => void toggle(c.id, !c.enabled)}>
                    {c.enabled ? "Disable" : "Enable"}
                  </button>{" "}
                  <Delete
                    label={`Delete channel ${c.name}`}
                    onDelete={() => unwrapped(api.DELETE("/api/v1/notification-channels/{id}", { params: { path: { id: c.id } } })).then(channels.reload)}
                  />
                </>
              ) : null}
              {results[c.id] ? (
                <span role="status" class="muted">
                  {" "}
                  {results[c.id]}
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
      {can("ManageSystem") ? (
        <Section title="New channel">
          <ApiForm
            id="channel-form"
            label="Create channel"
            initial={{ kind: "webhook", config: '{"url": "https://"}', enabled: true }}
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "kind", label: "Kind", type: "select", options: (kinds.data ?? []).map((k) => k.kind).concat(kinds.data ? [] : ["webhook"]) },
              { name: "config", label: "Config (JSON)", type: "textarea", help: "Fields depend on the kind (see GET /notification-channels/kinds)." },
              { name: "enabled", label: "Enabled", type: "checkbox" },
            ]}
            submit={(v) => {
              let config: unknown;
              try {
                config = JSON.parse(String(v.config ?? "{}"));
              } catch {
                return Promise.reject(new Error('"config" is not valid JSON.'));
              }
              return unwrapped(
                api.POST("/api/v1/notification-channels", {
                  body: { name: String(v.name ?? ""), kind: String(v.kind), config: config as Record<string, never>, enabled: Boolean(v.enabled) },
                }),
              );
            }}
            onDone={channels.reload}
          />
        </Section>
      ) : null}
    </div>
  );
}

export function RoutingRules() {
  const rules = useLoad(() => unwrapped(api.GET("/api/v1/routing-rules", { params: { query: { limit: 200 } as never } })), []);
  return (
    <div class="grid">
      <Section title="Routing rules">
        <ErrorNote error={rules.error} />
        <ul class="rows">
          {(rules.data ?? []).map((r) => (
            <li key={r.id}>
              <strong>{r.name}</strong> severity {r.severity ?? "any"} → {r.channel_ids.length} channel(s) {r.enabled ? "" : "(disabled)"}{" "}
              {can("ManageSystem") ? (
                <Delete
                  label={`Delete routing rule ${r.name}`}
                  onDelete={() => unwrapped(api.DELETE("/api/v1/routing-rules/{id}", { params: { path: { id: r.id } } })).then(rules.reload)}
                />
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
      {can("ManageSystem") ? (
        <Section title="New routing rule">
          <ApiForm
            id="routing-form"
            label="Create routing rule"
            initial={{ severity: "" }}
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "severity", label: "Severity", type: "select", options: ["", "critical", "warning", "info"] },
              { name: "channel_ids", label: "Channel ids (comma-separated)", required: true },
            ]}
            submit={(v) =>
              unwrapped(
                api.POST("/api/v1/routing-rules", {
                  body: { name: String(v.name ?? ""), severity: (str(v.severity) as "critical" | null) ?? null, channel_ids: list(v.channel_ids) ?? [] },
                }),
              )
            }
            onDone={rules.reload}
          />
        </Section>
      ) : null}
    </div>
  );
}

export function EventRules() {
  const rules = useLoad(() => unwrapped(api.GET("/api/v1/event-rules", { params: { query: { limit: 200 } as never } })), []);
  return (
    <div class="grid">
      <Section title="Event rules">
        <ErrorNote error={rules.error} />
        <ul class="rows">
          {(rules.data ?? []).map((r) => (
            <li key={r.id}>
              <strong>{r.name}</strong> {r.match_kind} <code>{r.pattern}</code> → {r.severity}{" "}
              {can("ManageConfig") ? (
                <Delete
                  label={`Delete event rule ${r.name}`}
                  onDelete={() => unwrapped(api.DELETE("/api/v1/event-rules/{id}", { params: { path: { id: r.id } } })).then(rules.reload)}
                />
              ) : null}
            </li>
          ))}
        </ul>
      </Section>
      {can("ManageConfig") ? (
        <Section title="New event rule">
          <ApiForm
            id="event-rule-form"
            label="Create event rule"
            initial={{ match_kind: "substring", severity: "warning", source_kind: "" }}
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "match_kind", label: "Match", type: "select", options: ["substring", "exact", "regex", "trap_oid", "varbind"] },
              { name: "pattern", label: "Pattern", required: true },
              { name: "severity", label: "Severity", type: "select", options: ["info", "warning", "critical"] },
              { name: "source_kind", label: "Source kind", type: "select", options: ["", "syslog", "trap", "http"] },
              { name: "clear_pattern", label: "Clear pattern" },
              { name: "min_count", label: "Minimum count", type: "number" },
              { name: "window_secs", label: "Window (s)", type: "number" },
            ]}
            submit={(v) =>
              unwrapped(
                api.POST("/api/v1/event-rules", {
                  body: {
                    name: String(v.name ?? ""),
                    match_kind: v.match_kind as "substring",
                    pattern: String(v.pattern ?? ""),
                    severity: v.severity as "warning",
                    source_kind: (str(v.source_kind) as "syslog" | null) ?? null,
                    clear_pattern: str(v.clear_pattern),
                    min_count: num(v.min_count),
                    window_secs: num(v.window_secs),
                  },
                }),
              )
            }
            onDone={rules.reload}
          />
        </Section>
      ) : null}
    </div>
  );
}
