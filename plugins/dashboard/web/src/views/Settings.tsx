// Settings operators edit most: thresholds, notification channels (per-kind forms, send test), routing rules (severity,
// channels, folders), event rules. Each is a list with names (never bare ids), a create form, an edit form on the same
// fields, and delete.
// References are pickers that search by name; secrets are write-only (an empty box keeps the stored value); the API's
// 400 message is shown next to the field it names.
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import {
  canEditGlobal,
  DeleteButton,
  EditButton,
  EditorCard,
  forgetNames,
  idsOf,
  LoadError,
  numOf,
  RefName,
  RefNames,
  schemaFields,
  schemaObject,
  schemaValues,
  SettingsForm,
  strOf,
  textOf,
  useEditor,
  type FormField,
  type FormValues,
} from "../forms.tsx";
import { MultiPicker, Picker } from "../pickers.tsx";
import { api, unwrapped, useLoad } from "../session.tsx";
import { Section } from "../ui.tsx";

type Threshold = Schemas["ThresholdView"];
type Channel = Schemas["ChannelView"];
type ChannelKind = Schemas["ChannelKindView"];
type RoutingRule = Schemas["RoutingRuleView"];
type EventRule = Schemas["EventRuleView"];

// ---------------------------------------------------------------------------------------------------------------------
// Thresholds

const SCOPE_LEVELS = ["global", "profile", "folder", "node", "interface"] as const;
type Level = (typeof SCOPE_LEVELS)[number];

/** One port: a node picker, then the node's interfaces by name. The value is `<node uuid>:<ifindex>`. */
function PortPicker({ id, value, onChange }: { id: string; value: string | null; onChange: (v: string | null) => void }) {
  const [node, ifindex] = value ? [value.split(":")[0], value.split(":")[1] ?? ""] : [null, ""];
  const ports = useLoad(() => (node ? unwrapped(api.GET("/api/v1/nodes/{id}/interfaces", { params: { path: { id: node } } })) : Promise.resolve([])), [node]);
  return (
    <div class="port-picker">
      <Picker id={id} kind="node" label="Interface's node" value={node} onChange={(n) => onChange(n ? `${n}:` : null)} />
      <select
        id={`${id}-port`}
        aria-label="Interface"
        disabled={!node}
        value={ifindex}
        onChange={(e) => onChange(node ? `${node}:${(e.target as HTMLSelectElement).value}` : null)}
      >
        <option value="">{node ? "choose a port" : "choose a node first"}</option>
        {(ports.data ?? []).map((p) => (
          <option key={p.ifindex} value={String(p.ifindex)}>
            {p.if_name ?? `ifIndex ${p.ifindex}`}
            {p.if_alias ? ` (${p.if_alias})` : ""}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A port's name: its node's name and the interface's name. */
function PortName({ value }: { value: string }) {
  const [node, ifindex] = value.split(":");
  const ports = useLoad(() => unwrapped(api.GET("/api/v1/nodes/{id}/interfaces", { params: { path: { id: node } } })), [node]);
  const port = (ports.data ?? []).find((p) => String(p.ifindex) === ifindex);
  return (
    <>
      <RefName kind="node" id={node} /> {port?.if_name ?? `ifIndex ${ifindex}`}
    </>
  );
}

const PICK_OF: Record<"profile" | "folder" | "node", "profile" | "folder" | "node"> = { profile: "profile", folder: "folder", node: "node" };

function thresholdFields(v: FormValues): FormField[] {
  const level = (v.scope_level as Level) ?? "global";
  const fields: FormField[] = [
    { name: "metric", label: "Metric", required: true, placeholder: "if_in_bps", help: "An identifier (if_in_bps, cpu_pct, …); raw counters are refused." },
    { name: "scope_level", label: "Scope level", type: "select", options: [...SCOPE_LEVELS] },
  ];
  if (level === "interface")
    fields.push({
      name: "scope_ids",
      label: "Interface",
      type: "custom",
      required: true,
      render: (id, values, set) => <PortPicker id={id} value={strOf(values.scope_port)} onChange={(x) => set("scope_port", x)} />,
    });
  else if (level !== "global")
    // Each level keeps its targets in its own value (scope_node, scope_folder, …): switching the level starts empty.
    fields.push({
      name: "scope_ids",
      label: `${level.charAt(0).toUpperCase()}${level.slice(1)}s`,
      type: "custom",
      help: `The ${level}s the rule applies to (at most 32); none = every node.`,
      render: (id, values, set) => (
        <MultiPicker
          key={level}
          id={id}
          kind={PICK_OF[level]}
          label={`${level.charAt(0).toUpperCase()}${level.slice(1)}s`}
          value={idsOf(values[`scope_${level}`])}
          max={32}
          onChange={(x) => set(`scope_${level}`, x)}
        />
      ),
    });
  fields.push(
    { name: "warning_above", label: "Warning above", type: "number" },
    { name: "critical_above", label: "Critical above", type: "number" },
    { name: "warning_below", label: "Warning below", type: "number" },
    { name: "critical_below", label: "Critical below", type: "number", help: "Set above and below bounds to alert outside a band." },
    { name: "dwell_samples", label: "Dwell samples", type: "number", help: "Consecutive samples before a change is committed (1 to 1000)." },
  );
  if (level !== "interface")
    fields.push({ name: "row_match", label: "Row match", placeholder: "e.g. /var*", help: "Table metrics only: rows whose name matches (* = any run)." });
  return fields;
}

function thresholdBody(v: FormValues): Schemas["ThresholdBody"] {
  const level = (v.scope_level as Level) ?? "global";
  const scope_ids = level === "global" ? [] : level === "interface" ? (strOf(v.scope_port) ? [String(v.scope_port)] : []) : idsOf(v[`scope_${level}`]);
  return {
    metric: String(v.metric ?? ""),
    scope_level: level,
    scope_ids,
    warning_above: numOf(v.warning_above),
    critical_above: numOf(v.critical_above),
    warning_below: numOf(v.warning_below),
    critical_below: numOf(v.critical_below),
    dwell_samples: numOf(v.dwell_samples),
    ...(level !== "interface" ? { row_match: strOf(v.row_match) } : {}),
  };
}

function thresholdInitial(r: Threshold | null): FormValues {
  if (!r) return { scope_level: "global", dwell_samples: "1" };
  return {
    metric: r.metric,
    scope_level: r.scope_level,
    ...(r.scope_level === "interface" ? { scope_port: r.scope_ids[0] ?? null } : { [`scope_${r.scope_level}`]: r.scope_ids }),
    warning_above: textOf(r.warning_above),
    critical_above: textOf(r.critical_above),
    warning_below: textOf(r.warning_below),
    critical_below: textOf(r.critical_below),
    dwell_samples: textOf(r.dwell_samples),
    row_match: textOf(r.row_match),
  };
}

const bounds = (above: number | null, below: number | null) =>
  [above !== null ? `≥ ${above}` : "", below !== null ? `≤ ${below}` : ""].filter(Boolean).join(" ") || "–";

function Scope({ r }: { r: Threshold }) {
  if (r.scope_level === "global") return <>every node</>;
  if (r.scope_level === "interface") return <>{r.scope_ids[0] ? <PortName value={r.scope_ids[0]} /> : "–"}</>;
  return (
    <>
      {r.scope_level}: <RefNames kind={PICK_OF[r.scope_level as "node"]} ids={r.scope_ids} empty="every node" />
    </>
  );
}

export function Thresholds() {
  const rules = useLoad(() => unwrapped(api.GET("/api/v1/thresholds", { params: { query: { limit: 200 } } })), []);
  const editor = useEditor();
  const writable = canEditGlobal("ManageConfig");
  const editing = editor.editing && editor.editing !== "new" ? (rules.data ?? []).find((r) => r.id === editor.editing) : null;
  return (
    <div class="settings-grid">
      <Section title="Thresholds">
        <LoadError error={rules.error} />
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
                  <td>
                    {r.metric}
                    {r.row_match ? <small class="muted"> rows {r.row_match}</small> : null}
                  </td>
                  <td>
                    <Scope r={r} />
                  </td>
                  <td class="num">{bounds(r.warning_above, r.warning_below)}</td>
                  <td class="num">{bounds(r.critical_above, r.critical_below)}</td>
                  <td class="num">{r.dwell_samples}</td>
                  <td class="row-actions">
                    {writable ? (
                      <>
                        <EditButton label={`Edit threshold ${r.metric}`} onClick={() => editor.edit(r.id)} />{" "}
                        <DeleteButton
                          label={`Delete threshold ${r.metric}`}
                          onDelete={() => unwrapped(api.DELETE("/api/v1/thresholds/{id}", { params: { path: { id: r.id } } })).then(rules.reload)}
                        />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {rules.data && !rules.data.length ? <p class="muted">No threshold rules yet.</p> : null}
      </Section>
      {writable ? (
        <EditorCard title={editing ? `Edit threshold ${editing.metric}` : "New threshold"}>
          <SettingsForm
            key={editing?.id ?? "new"}
            id={editing ? "threshold-edit" : "threshold-form"}
            label={editing ? "Save threshold" : "Create threshold"}
            initial={thresholdInitial(editing ?? null)}
            fields={thresholdFields}
            submit={(v) =>
              editing
                ? unwrapped(api.PUT("/api/v1/thresholds/{id}", { params: { path: { id: editing.id } }, body: thresholdBody(v) }))
                : unwrapped(api.POST("/api/v1/thresholds", { body: thresholdBody(v) }))
            }
            onDone={() => {
              rules.reload();
              if (editing) editor.close();
            }}
            onCancel={editing ? editor.close : undefined}
          />
        </EditorCard>
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// Notification channels

/** A channel's main address for the list: its URL or mail host and recipients (no secret is ever in config). */
function channelTarget(c: Channel): string {
  const cfg = c.config as Record<string, unknown>;
  if (typeof cfg.url === "string") return cfg.url;
  if (typeof cfg.host === "string") return `${cfg.host} → ${Array.isArray(cfg.to) ? cfg.to.join(", ") : ""}`;
  return "";
}

const optionalSecrets = (k: ChannelKind | undefined) =>
  (k?.secret_fields ?? []).filter((f) => {
    const p = (k!.config_schema.properties as Record<string, { type?: string | string[] }> | undefined)?.[f];
    return Array.isArray(p?.type) ? p.type.includes("null") : p?.type === "null";
  });

function channelFields(kinds: ChannelKind[], editing: Channel | null) {
  return (v: FormValues): FormField[] => {
    const kind = kinds.find((k) => k.kind === (editing?.kind ?? v.kind));
    const fields: FormField[] = [
      { name: "name", label: "Name", required: true },
      editing
        ? { name: "kind", label: "Kind", type: "select", options: [editing.kind], help: "The kind of a channel cannot change: make a new channel." }
        : { name: "kind", label: "Kind", type: "select", options: kinds.map((k) => ({ value: k.kind, label: `${k.kind}: ${k.description}` })) },
      ...schemaFields(kind?.config_schema, "config.", { secrets: kind?.secret_fields, secretsSet: editing?.secrets_set }),
    ];
    if (editing)
      for (const s of optionalSecrets(kind).filter((s) => editing.secrets_set.includes(s)))
        fields.push({ name: `clear.${s}`, label: `Remove the stored ${s.replace(/_/g, " ")}`, type: "checkbox" });
    fields.push({ name: "enabled", label: "Enabled", type: "checkbox", help: "A disabled channel gets no deliveries (a test send still works)." });
    return fields;
  };
}

function channelInitial(kinds: ChannelKind[], c: Channel | null): FormValues {
  const kind = kinds.find((k) => k.kind === (c?.kind ?? "webhook")) ?? kinds[0];
  return {
    name: c?.name ?? "",
    kind: c?.kind ?? kind?.kind ?? "webhook",
    enabled: c?.enabled ?? true,
    ...schemaValues(kind?.config_schema, "config.", (c?.config as Record<string, unknown>) ?? {}, kind?.secret_fields ?? []),
  };
}

async function saveChannel(kinds: ChannelKind[], editing: Channel | null, v: FormValues) {
  const kind = kinds.find((k) => k.kind === (editing?.kind ?? v.kind));
  if (!kind) throw new Error("Choose a channel kind.");
  const clear = optionalSecrets(kind).filter((s) => v[`clear.${s}`] === true);
  const config = schemaObject(kind.config_schema, "config.", v, clear);
  if (!editing) {
    await unwrapped(api.POST("/api/v1/notification-channels", { body: { name: String(v.name ?? ""), kind: kind.kind, config, enabled: Boolean(v.enabled) } }));
    return;
  }
  // PATCH keeps a secret the body leaves out (the empty boxes); PUT only toggles enabled.
  await unwrapped(api.PATCH("/api/v1/notification-channels/{id}", { params: { path: { id: editing.id } }, body: { name: String(v.name ?? ""), config } }));
  if (Boolean(v.enabled) !== editing.enabled)
    await unwrapped(api.PUT("/api/v1/notification-channels/{id}", { params: { path: { id: editing.id } }, body: { enabled: Boolean(v.enabled) } }));
  forgetNames();
}

export function Channels() {
  const channels = useLoad(() => unwrapped(api.GET("/api/v1/notification-channels", { params: { query: { limit: 200 } as never } })), []);
  const kinds = useLoad(() => unwrapped(api.GET("/api/v1/notification-channels/kinds")), []);
  const [results, setResults] = useState<Record<string, { ok: boolean; text: string }>>({});
  const editor = useEditor();
  const writable = canEditGlobal("ManageSystem");
  const editing = editor.editing && editor.editing !== "new" ? (channels.data ?? []).find((c) => c.id === editor.editing) : null;
  const test = async (id: string) => {
    setResults((r) => ({ ...r, [id]: { ok: true, text: "sending…" } }));
    try {
      const res = await unwrapped(api.POST("/api/v1/notification-channels/{id}/test", { params: { path: { id } } }));
      const closed = res.closed === true ? ", incident closed again" : res.closed === false ? ", incident left open" : "";
      setResults((r) => ({
        ...r,
        [id]: res.delivered ? { ok: true, text: `delivered${closed}` } : { ok: false, text: `failed: ${res.error ?? "no detail"}` },
      }));
    } catch (e) {
      setResults((r) => ({ ...r, [id]: { ok: false, text: (e as Error).message } }));
    }
  };
  const toggle = (id: string, enabled: boolean) =>
    unwrapped(api.PUT("/api/v1/notification-channels/{id}", { params: { path: { id } }, body: { enabled } })).then(channels.reload);
  return (
    <div class="settings-grid">
      <Section title="Notification channels">
        <LoadError error={channels.error} />
        <div class="table-wrap">
          <table data-testid="channels">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Sends to</th>
                <th scope="col">Secrets</th>
                <th scope="col">State</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {(channels.data ?? []).map((c) => (
                <tr key={c.id} data-channel={c.id}>
                  <td>
                    <strong>{c.name}</strong>
                  </td>
                  <td>{c.kind}</td>
                  <td class="wrap">{channelTarget(c)}</td>
                  <td>{c.secrets_set.length ? c.secrets_set.map((s) => s.replace(/_/g, " ")).join(", ") + " stored" : "–"}</td>
                  <td>{c.enabled ? "enabled" : "disabled"}</td>
                  <td class="row-actions">
                    {writable ? (
                      <>
                        <button type="button" class="small" aria-label={`Send test to ${c.name}`} onClick={() => void test(c.id)}>
                          Send test
                        </button>{" "}
                        <button
                          type="button"
                          class="small"
                          aria-label={`${c.enabled ? "Disable" : "Enable"} ${c.name}`}
                          onClick={() => void toggle(c.id, !c.enabled)}
                        >
                          {c.enabled ? "Disable" : "Enable"}
                        </button>{" "}
                        <EditButton label={`Edit channel ${c.name}`} onClick={() => editor.edit(c.id)} />{" "}
                        <DeleteButton
                          label={`Delete channel ${c.name}`}
                          onDelete={() => unwrapped(api.DELETE("/api/v1/notification-channels/{id}", { params: { path: { id: c.id } } })).then(channels.reload)}
                        />
                      </>
                    ) : null}
                    {results[c.id] ? (
                      <span role="status" class={results[c.id].ok ? "muted" : "error"} data-testid="test-result">
                        {" "}
                        {results[c.id].text}
                      </span>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {channels.data && !channels.data.length ? <p class="muted">No channels yet.</p> : null}
      </Section>
      {writable && kinds.data ? (
        <EditorCard title={editing ? `Edit channel ${editing.name}` : "New channel"}>
          <ChannelForm key={editing?.id ?? "new"} kinds={kinds.data} editing={editing ?? null} onDone={channels.reload} onClose={editor.close} />
        </EditorCard>
      ) : null}
    </div>
  );
}

function ChannelForm({ kinds, editing, onDone, onClose }: { kinds: ChannelKind[]; editing: Channel | null; onDone: () => void; onClose: () => void }) {
  // A new channel's kind select re-keys the form, so each kind starts from its own defaults.
  const [kind, setKind] = useState(editing?.kind ?? kinds[0]?.kind ?? "webhook");
  const fields = channelFields(kinds, editing);
  return (
    <SettingsForm
      key={kind}
      id={editing ? "channel-edit" : "channel-form"}
      label={editing ? "Save channel" : "Create channel"}
      initial={channelInitial(kinds, editing ?? ({ kind } as Channel))}
      fields={fields}
      onField={(name, v) => !editing && name === "kind" && setKind(String(v))}
      codeFields={{ name_taken: "name", unknown_channel_kind: "kind" }}
      submit={(v) => saveChannel(kinds, editing, v)}
      onDone={() => {
        onDone();
        if (editing) onClose();
      }}
      onCancel={editing ? onClose : undefined}
    />
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// Routing rules

export function RoutingRules() {
  const rules = useLoad(() => unwrapped(api.GET("/api/v1/routing-rules", { params: { query: { limit: 200 } as never } })), []);
  const editor = useEditor();
  const writable = canEditGlobal("ManageSystem");
  const editing = editor.editing && editor.editing !== "new" ? (rules.data ?? []).find((r) => r.id === editor.editing) : null;
  const initial = (r: RoutingRule | null): FormValues => ({
    name: r?.name ?? "",
    severity: r?.severity ?? "",
    channel_ids: r?.channel_ids ?? [],
    folder_ids: r?.folder_ids ?? [],
    root_cause_only: r?.root_cause_only ?? false,
    enabled: r?.enabled ?? true,
  });
  const body = (v: FormValues): Schemas["RoutingRuleBody"] => ({
    name: String(v.name ?? ""),
    severity: (strOf(v.severity) as "critical" | null) ?? null,
    channel_ids: idsOf(v.channel_ids),
    folder_ids: idsOf(v.folder_ids),
    root_cause_only: Boolean(v.root_cause_only),
    enabled: Boolean(v.enabled),
  });
  return (
    <div class="settings-grid">
      <Section title="Routing rules">
        <LoadError error={rules.error} />
        <div class="table-wrap">
          <table data-testid="routing-rules">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Severity</th>
                <th scope="col">Channels</th>
                <th scope="col">Folders</th>
                <th scope="col">State</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {(rules.data ?? []).map((r) => (
                <tr key={r.id} data-rule={r.id}>
                  <td>
                    <strong>{r.name}</strong>
                  </td>
                  <td>{r.severity ?? "any"}</td>
                  <td data-testid="rule-channels">
                    <RefNames kind="channel" ids={r.channel_ids} />
                  </td>
                  <td data-testid="rule-folders">
                    <RefNames kind="folder" ids={r.folder_ids} empty="every alert" />
                  </td>
                  <td>
                    {r.enabled ? "enabled" : "disabled"}
                    {r.root_cause_only ? ", root causes only" : ""}
                  </td>
                  <td class="row-actions">
                    {writable ? (
                      <>
                        <EditButton label={`Edit routing rule ${r.name}`} onClick={() => editor.edit(r.id)} />{" "}
                        <DeleteButton
                          label={`Delete routing rule ${r.name}`}
                          onDelete={() => unwrapped(api.DELETE("/api/v1/routing-rules/{id}", { params: { path: { id: r.id } } })).then(rules.reload)}
                        />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {rules.data && !rules.data.length ? <p class="muted">No routing rules yet.</p> : null}
      </Section>
      {writable ? (
        <EditorCard title={editing ? `Edit routing rule ${editing.name}` : "New routing rule"}>
          <SettingsForm
            key={editing?.id ?? "new"}
            id={editing ? "routing-edit" : "routing-form"}
            label={editing ? "Save routing rule" : "Create routing rule"}
            initial={initial(editing ?? null)}
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "severity", label: "Severity", type: "select", options: [{ value: "", label: "any" }, "critical", "warning", "info"] },
              {
                name: "channel_ids",
                label: "Channels",
                type: "multipicker",
                pick: "channel",
                max: 100,
                required: true,
                help: "Alerts this rule matches go to these.",
              },
              {
                name: "folder_ids",
                label: "Only alerts of nodes in",
                type: "multipicker",
                pick: "folder",
                max: 32,
                help: "Folders (and beneath); none = every alert, pool alerts included.",
              },
              {
                name: "root_cause_only",
                label: "Root causes only",
                type: "checkbox",
                help: "Skip the alerts of nodes unreachable because an upstream node is (topology).",
              },
              { name: "enabled", label: "Enabled", type: "checkbox" },
            ]}
            codeFields={{ unknown_reference: "channel_ids" }}
            submit={(v) =>
              editing
                ? unwrapped(api.PUT("/api/v1/routing-rules/{id}", { params: { path: { id: editing.id } }, body: body(v) }))
                : unwrapped(api.POST("/api/v1/routing-rules", { body: body(v) }))
            }
            onDone={() => {
              rules.reload();
              if (editing) editor.close();
            }}
            onCancel={editing ? editor.close : undefined}
          />
        </EditorCard>
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// Event rules

function EventSourceSelect({ id, value, onChange }: { id: string; value: string | null; onChange: (v: string | null) => void }) {
  const sources = useLoad(() => unwrapped(api.GET("/api/v1/event-sources", { params: { query: { limit: 200 } as never } })), []);
  return (
    <select id={id} value={value ?? ""} onChange={(e) => onChange((e.target as HTMLSelectElement).value || null)}>
      <option value="">any source</option>
      {(sources.data ?? []).map((s) => (
        <option key={s.id} value={s.id}>
          {s.name} ({s.kind})
        </option>
      ))}
      {value && sources.data && !sources.data.some((s) => s.id === value) ? <option value={value}>(unknown source)</option> : null}
    </select>
  );
}

function EventSourceName({ id }: { id: string }) {
  const [name, setName] = useState<string>("…");
  useEffect(() => {
    void unwrapped(api.GET("/api/v1/event-sources/{id}", { params: { path: { id } } })).then(
      (s) => setName(s.name),
      () => setName("(a source)"),
    );
  }, [id]);
  return <>{name}</>;
}

const EVENT_RULE_FIELDS: FormField[] = [
  { name: "name", label: "Name", required: true },
  { name: "match_kind", label: "Match", type: "select", options: ["substring", "exact", "regex", "trap_oid", "varbind"] },
  { name: "pattern", label: "Pattern", required: true, help: "Text, regex, trap OID, or OID=value / OID~regex, as Match says." },
  { name: "severity", label: "Severity", type: "select", options: ["info", "warning", "critical"] },
  { name: "source_kind", label: "Source kind", type: "select", options: [{ value: "", label: "any" }, "syslog", "trap", "http"] },
  { name: "node_id", label: "Node", type: "picker", pick: "node", help: "Only events attributed to this node; empty = any node." },
  {
    name: "source_id",
    label: "Event source",
    type: "custom",
    render: (id, v, set) => <EventSourceSelect id={id} value={strOf(v.source_id)} onChange={(x) => set("source_id", x)} />,
  },
  { name: "clear_pattern", label: "Clear pattern", help: "A matching event clears the rule's alert on that node." },
  { name: "min_count", label: "Minimum count", type: "number", help: "Matches within the window that raise the alert (default 1)." },
  { name: "window_secs", label: "Window (s)", type: "number", help: "Default 60." },
  { name: "ttl_secs", label: "Clear after (s)", type: "number", help: "The alert clears after this long without a match; empty = never." },
  { name: "enabled", label: "Enabled", type: "checkbox" },
];

export function EventRules() {
  const rules = useLoad(() => unwrapped(api.GET("/api/v1/event-rules", { params: { query: { limit: 200 } as never } })), []);
  const editor = useEditor();
  const writable = canEditGlobal("ManageConfig");
  const editing = editor.editing && editor.editing !== "new" ? (rules.data ?? []).find((r) => r.id === editor.editing) : null;
  const initial = (r: EventRule | null): FormValues =>
    r
      ? {
          name: r.name,
          match_kind: r.match_kind,
          pattern: r.pattern,
          severity: r.severity,
          source_kind: r.source_kind ?? "",
          node_id: r.node_id,
          source_id: r.source_id,
          clear_pattern: textOf(r.clear_pattern),
          min_count: textOf(r.min_count),
          window_secs: textOf(r.window_secs),
          ttl_secs: textOf(r.ttl_secs),
          enabled: r.enabled,
        }
      : { match_kind: "substring", severity: "warning", source_kind: "", enabled: true };
  const body = (v: FormValues): Schemas["EventRuleBody"] => ({
    name: String(v.name ?? ""),
    match_kind: String(v.match_kind) as "substring",
    pattern: String(v.pattern ?? ""),
    severity: String(v.severity) as "warning",
    source_kind: strOf(v.source_kind) as "syslog" | null,
    node_id: strOf(v.node_id),
    source_id: strOf(v.source_id),
    clear_pattern: strOf(v.clear_pattern),
    min_count: numOf(v.min_count),
    window_secs: numOf(v.window_secs),
    ttl_secs: numOf(v.ttl_secs),
    enabled: Boolean(v.enabled),
  });
  return (
    <div class="settings-grid">
      <Section title="Event rules">
        <LoadError error={rules.error} />
        <div class="table-wrap">
          <table data-testid="event-rules">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Match</th>
                <th scope="col">Severity</th>
                <th scope="col">Node</th>
                <th scope="col">Count / window</th>
                <th scope="col">State</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {(rules.data ?? []).map((r) => (
                <tr key={r.id} data-rule={r.id}>
                  <td>
                    <strong>{r.name}</strong>
                  </td>
                  <td>
                    {r.source_kind ?? "any"} {r.match_kind} <code>{r.pattern}</code>
                    {r.source_id ? (
                      <small class="muted">
                        {" "}
                        from <EventSourceName id={r.source_id} />
                      </small>
                    ) : null}
                  </td>
                  <td>{r.severity}</td>
                  <td data-testid="rule-node">{r.node_id ? <RefName kind="node" id={r.node_id} /> : "any"}</td>
                  <td class="num">
                    {r.min_count} in {r.window_secs} s
                  </td>
                  <td>{r.enabled ? "enabled" : "disabled"}</td>
                  <td class="row-actions">
                    {writable ? (
                      <>
                        <EditButton label={`Edit event rule ${r.name}`} onClick={() => editor.edit(r.id)} />{" "}
                        <DeleteButton
                          label={`Delete event rule ${r.name}`}
                          onDelete={() => unwrapped(api.DELETE("/api/v1/event-rules/{id}", { params: { path: { id: r.id } } })).then(rules.reload)}
                        />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {rules.data && !rules.data.length ? <p class="muted">No event rules yet.</p> : null}
      </Section>
      {writable ? (
        <EditorCard title={editing ? `Edit event rule ${editing.name}` : "New event rule"}>
          <SettingsForm
            key={editing?.id ?? "new"}
            id={editing ? "event-rule-edit" : "event-rule-form"}
            label={editing ? "Save event rule" : "Create event rule"}
            initial={initial(editing ?? null)}
            fields={EVENT_RULE_FIELDS}
            submit={(v) =>
              editing
                ? unwrapped(api.PUT("/api/v1/event-rules/{id}", { params: { path: { id: editing.id } }, body: body(v) }))
                : unwrapped(api.POST("/api/v1/event-rules", { body: body(v) }))
            }
            onDone={() => {
              rules.reload();
              if (editing) editor.close();
            }}
            onCancel={editing ? editor.close : undefined}
          />
        </EditorCard>
      ) : null}
    </div>
  );
}

/** The settings tab of `#/settings/<tab>` (one lazily loaded module for the four). */
export function SettingsPage({ tab }: { tab: string }) {
  return tab === "channels" ? <Channels /> : tab === "routing" ? <RoutingRules /> : tab === "event-rules" ? <EventRules /> : <Thresholds />;
}
