// Forwarding destinations (plugins/forwarding): list, create, edit, delete. The fields follow the destination kind;
// the trap community and the warehouse key are write-only (an empty box keeps the stored value).
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import {
  canEditGlobal,
  DeleteButton,
  EditButton,
  EditorCard,
  LoadError,
  numOf,
  SettingsForm,
  strOf,
  textOf,
  useEditor,
  type FormField,
  type FormValues,
} from "../forms.tsx";
import { api, unwrapped, useLoad } from "../session.tsx";
import { Section } from "../ui.tsx";

type Destination = Schemas["DestinationView"];

const DEST_KINDS = ["syslog_udp", "syslog_tcp", "syslog_tls", "snmp_trap_udp", "flow_udp", "warehouse"] as const;
/** Which stream each kind can carry (the API answers kind_mismatch otherwise). */
const KIND_SOURCES: Record<string, string[]> = {
  syslog_udp: ["syslog"],
  syslog_tcp: ["syslog"],
  syslog_tls: ["syslog"],
  snmp_trap_udp: ["trap"],
  flow_udp: ["flow"],
  warehouse: ["syslog", "trap", "flow"],
};
const FILTER_FIELDS = [
  "source_ip",
  "pool",
  "kind",
  "facility",
  "severity",
  "hostname",
  "app_name",
  "message",
  "trap_oid",
  "varbind",
  "src_addr",
  "dst_addr",
  "proto",
  "src_port",
  "dst_port",
  "src_as",
  "dst_as",
];
const FILTER_OPS = ["eq", "ne", "contains", "not_contains", "prefix", "regex", "not_regex", "in_list", "in_cidr", "not_in_cidr", "lte", "gte"];

interface Condition {
  field: string;
  op: string;
  value: string;
}
/** The view's filter (the generated type of a nullable object is loose). */
const filterOf = (d: Destination | null | undefined) => (d?.filter ?? null) as { mode: string; conditions: Condition[] } | null;
const parseConds = (v: unknown): Condition[] => (Array.isArray(v) ? v.map((s) => JSON.parse(String(s)) as Condition) : []);

/** The filter's conditions: one row each (field, operator, value), add and remove. */
function ConditionsEditor({ id, value, onChange }: { id: string; value: Condition[]; onChange: (c: Condition[]) => void }) {
  const put = (i: number, c: Partial<Condition>) => onChange(value.map((x, j) => (j === i ? { ...x, ...c } : x)));
  return (
    <div class="conditions" id={id}>
      {value.map((c, i) => (
        <div class="condition" key={i} data-condition={i}>
          <select aria-label={`Condition ${i + 1} field`} value={c.field} onChange={(e) => put(i, { field: (e.target as HTMLSelectElement).value })}>
            {FILTER_FIELDS.map((f) => (
              <option key={f}>{f}</option>
            ))}
          </select>
          <select aria-label={`Condition ${i + 1} operator`} value={c.op} onChange={(e) => put(i, { op: (e.target as HTMLSelectElement).value })}>
            {FILTER_OPS.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
          <input aria-label={`Condition ${i + 1} value`} value={c.value} onInput={(e) => put(i, { value: (e.target as HTMLInputElement).value })} />
          <button type="button" class="small link" aria-label={`Remove condition ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" class="small" onClick={() => onChange([...value, { field: "severity", op: "lte", value: "" }])}>
        Add condition
      </button>
    </div>
  );
}

function destinationFields(editing: Destination | null) {
  return (v: FormValues): FormField[] => {
    const kind = String(v.dest_kind ?? "syslog_udp");
    const fields: FormField[] = [
      { name: "name", label: "Name", required: true, help: "1 to 120 characters, unique." },
      { name: "dest_kind", label: "Destination kind", type: "select", options: [...DEST_KINDS] },
      { name: "source_kind", label: "Stream", type: "select", options: KIND_SOURCES[kind] ?? ["syslog"], help: "The received stream it tees." },
      { name: "target", label: "Target", required: true, placeholder: "collector.example:514", help: "host:port of the collector." },
      { name: "enabled", label: "Enabled", type: "checkbox" },
      { name: "verbatim", label: "Relay original bytes", type: "checkbox", help: "Off: re-render from the parsed fields." },
      { name: "pool", label: "Poller pool", placeholder: "every pool", help: "Only what this pool's pollers received; empty = every pool." },
      { name: "rate_limit_per_sec", label: "Rate limit (messages/s)", type: "number", help: "Empty = no ceiling." },
    ];
    if (kind === "syslog_tls" || kind === "warehouse")
      fields.push({
        name: "ca_cert",
        label: "Trusted CA certificates (PEM)",
        type: "textarea",
        help: "In addition to the system roots; not secret. Empty clears it.",
      });
    if (kind === "snmp_trap_udp") {
      fields.push({
        name: "community",
        label: "SNMP community",
        type: "secret",
        secretSet: editing?.has_community ?? false,
        help: "The community of re-encoded traps.",
      });
      if (editing?.has_community) fields.push({ name: "clear_community", label: "Remove the stored community", type: "checkbox" });
    }
    if (kind === "warehouse") {
      fields.push({
        name: "service_account_json",
        label: "Service-account key (JSON)",
        type: "secret",
        secretSet: editing?.has_service_account ?? false,
        help: "Empty on a new destination: the platform's ambient identity.",
      });
      if (editing?.has_service_account)
        fields.push({ name: "clear_service_account_json", label: "Remove the stored key (use the ambient identity)", type: "checkbox" });
    }
    fields.push(
      {
        name: "filter_mode",
        label: "Filter",
        type: "select",
        options: [
          { value: "all", label: "every condition holds" },
          { value: "any", label: "any condition holds" },
        ],
      },
      {
        name: "filter_conditions",
        label: "Conditions",
        type: "custom",
        help: "None = forward the whole stream.",
        render: (id, values, set) => (
          <ConditionsEditor
            id={id}
            value={parseConds(values.filter_conditions)}
            onChange={(c) =>
              set(
                "filter_conditions",
                c.map((x) => JSON.stringify(x)),
              )
            }
          />
        ),
      },
    );
    return fields;
  };
}

function initial(d: Destination | null): FormValues {
  return {
    name: d?.name ?? "",
    dest_kind: d?.dest_kind ?? "syslog_udp",
    source_kind: d?.source_kind ?? "syslog",
    target: d?.target ?? "",
    enabled: d?.enabled ?? true,
    verbatim: d?.verbatim ?? true,
    pool: textOf(d?.pool),
    rate_limit_per_sec: textOf(d?.rate_limit_per_sec),
    ca_cert: textOf(d?.ca_cert),
    community: "",
    service_account_json: "",
    filter_mode: filterOf(d)?.mode ?? "all",
    filter_conditions: (filterOf(d)?.conditions ?? []).map((c) => JSON.stringify({ field: c.field, op: c.op, value: c.value })),
  };
}

function body(v: FormValues): Schemas["DestinationBody"] {
  const kind = String(v.dest_kind) as Schemas["DestinationBody"]["dest_kind"];
  const sources = KIND_SOURCES[kind] ?? [];
  const conditions = parseConds(v.filter_conditions);
  const out: Schemas["DestinationBody"] = {
    name: String(v.name ?? ""),
    dest_kind: kind,
    // A kind switch may leave a stream the new kind cannot carry: take its first.
    source_kind: (sources.includes(String(v.source_kind)) ? String(v.source_kind) : sources[0]) as "syslog",
    target: String(v.target ?? ""),
    enabled: Boolean(v.enabled),
    verbatim: Boolean(v.verbatim),
    pool: strOf(v.pool),
    rate_limit_per_sec: numOf(v.rate_limit_per_sec),
    filter: conditions.length ? { mode: String(v.filter_mode ?? "all"), conditions } : null,
  };
  if (kind === "syslog_tls" || kind === "warehouse") out.ca_cert = strOf(v.ca_cert);
  // Secrets: omitted keeps the stored one, null clears it, a value replaces it.
  if (kind === "snmp_trap_udp") {
    if (v.clear_community === true) out.community = null;
    else if (strOf(v.community)) out.community = String(v.community);
  }
  if (kind === "warehouse") {
    if (v.clear_service_account_json === true) out.service_account_json = null;
    else if (strOf(v.service_account_json)) out.service_account_json = String(v.service_account_json);
  }
  return out;
}

export function Destinations() {
  const list = useLoad(() => unwrapped(api.GET("/api/v1/forwarding/destinations", { params: { query: { limit: 200 } as never } })), []);
  const editor = useEditor();
  const writable = canEditGlobal("ManageSystem");
  const editing = editor.editing && editor.editing !== "new" ? (list.data ?? []).find((d) => d.id === editor.editing) : null;
  return (
    <div class="settings-grid">
      <Section title="Forwarding destinations">
        <LoadError error={list.error} />
        <div class="table-wrap">
          <table data-testid="destinations">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Sends</th>
                <th scope="col">Filter</th>
                <th scope="col">Secret</th>
                <th scope="col">State</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {(list.data ?? []).map((d) => (
                <tr key={d.id} data-destination={d.id}>
                  <td>
                    <strong>{d.name}</strong>
                  </td>
                  <td>
                    {d.source_kind} by {d.dest_kind.replace(/_/g, " ")} to <code>{d.target}</code>
                    {d.pool ? <small class="muted"> (pool {d.pool} only)</small> : null}
                  </td>
                  <td class="wrap">
                    {filterOf(d)?.conditions.length
                      ? `${filterOf(d)!.mode === "any" ? "any of" : "all of"} ${filterOf(d)!
                          .conditions.map((c) => `${c.field} ${c.op} ${c.value}`)
                          .join("; ")}`
                      : "whole stream"}
                  </td>
                  <td>{d.has_community ? "community stored" : d.has_service_account ? "key stored" : d.ambient_identity ? "ambient identity" : "–"}</td>
                  <td>
                    {d.enabled ? "enabled" : "disabled"}
                    {d.disabled_reason ? <small class="error"> {d.disabled_reason === "secret_missing" ? "(secret missing)" : d.disabled_reason}</small> : null}
                  </td>
                  <td class="row-actions">
                    {writable ? (
                      <>
                        <EditButton label={`Edit destination ${d.name}`} onClick={() => editor.edit(d.id)} />{" "}
                        <DeleteButton
                          label={`Delete destination ${d.name}`}
                          onDelete={() => unwrapped(api.DELETE("/api/v1/forwarding/destinations/{id}", { params: { path: { id: d.id } } })).then(list.reload)}
                        />
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {list.data && !list.data.length ? <p class="muted">No forwarding destinations yet.</p> : null}
      </Section>
      {writable ? (
        <EditorCard title={editing ? `Edit destination ${editing.name}` : "New destination"}>
          <SettingsForm
            key={editing?.id ?? "new"}
            id={editing ? "destination-edit" : "destination-form"}
            label={editing ? "Save destination" : "Create destination"}
            initial={initial(editing ?? null)}
            fields={destinationFields(editing ?? null)}
            codeFields={{
              kind_mismatch: "source_kind",
              invalid_pool: "pool",
              invalid_target: "target",
              invalid_rate_limit: "rate_limit_per_sec",
              invalid_filter: "filter_conditions",
              invalid_ca_cert: "ca_cert",
              community_not_allowed: "community",
              invalid_service_account: "service_account_json",
              name_taken: "name",
            }}
            submit={(v) =>
              editing
                ? unwrapped(api.PUT("/api/v1/forwarding/destinations/{id}", { params: { path: { id: editing.id } }, body: body(v) }))
                : unwrapped(api.POST("/api/v1/forwarding/destinations", { body: body(v) }))
            }
            onDone={() => {
              list.reload();
              if (editing) editor.close();
            }}
            onCancel={editing ? editor.close : undefined}
          />
        </EditorCard>
      ) : null}
    </div>
  );
}
