// Report definitions and schedules (plugins/reports) and analysis schedules (plugins/analysis): list, create, edit,
// delete. A definition's sections are chosen from GET /reports/section-kinds, their params from each kind's schema;
// an analysis schedule's params from its tool's schema. A folder-scoped account sees and edits only its own
// schedules (the API's rule).
import type { JSX } from "preact";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import {
  DeleteButton,
  EditButton,
  EditorCard,
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
import { api, can, unwrapped, useLoad, type Loaded } from "../session.tsx";
import { fmtTime, Section } from "../ui.tsx";

type Definition = Schemas["DefinitionView"];
type SectionKind = Schemas["SectionKindView"];
type ReportSchedule = Schemas["ReportScheduleView"];
type AnalysisSchedule = Schemas["AnalysisScheduleView"];
type Tool = Schemas["ToolView"];

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** When a schedule runs, in words. */
export function when(s: { frequency: string; at_hour: number; at_minute: number; day_of_week: number | null; day_of_month: number | null; timezone: string }) {
  const at = `${String(s.at_hour).padStart(2, "0")}:${String(s.at_minute).padStart(2, "0")} ${s.timezone}`;
  if (s.frequency === "weekly") return `weekly, ${DAYS[s.day_of_week ?? 0]} ${at}`;
  if (s.frequency === "monthly") return `monthly, day ${s.day_of_month ?? 1} ${at}`;
  return `daily ${at}`;
}

/** The fields every schedule has: frequency, the day it needs, the time and its zone. */
function timingFields(v: FormValues): FormField[] {
  const fields: FormField[] = [{ name: "frequency", label: "Frequency", type: "select", options: ["daily", "weekly", "monthly"] }];
  if (v.frequency === "weekly")
    fields.push({ name: "day_of_week", label: "Day of week", type: "select", options: DAYS.map((d, i) => ({ value: String(i), label: d })) });
  if (v.frequency === "monthly")
    fields.push({ name: "day_of_month", label: "Day of month", type: "number", help: "1 to 31; a shorter month runs on its last day." });
  fields.push(
    { name: "at_hour", label: "Hour", type: "number", required: true, help: "0 to 23" },
    { name: "at_minute", label: "Minute", type: "number", required: true, help: "0 to 59" },
    { name: "timezone", label: "Time zone", placeholder: "UTC", help: "An IANA zone, e.g. Europe/Berlin." },
    { name: "enabled", label: "Enabled", type: "checkbox" },
  );
  return fields;
}

type Timing = {
  frequency: string;
  at_hour: number;
  at_minute: number;
  day_of_week: number | null;
  day_of_month: number | null;
  timezone: string;
  enabled: boolean;
};

function timingValues(s: Timing | null): FormValues {
  return {
    frequency: s?.frequency ?? "daily",
    day_of_week: s?.day_of_week !== null && s?.day_of_week !== undefined ? String(s.day_of_week) : "1",
    day_of_month: textOf(s?.day_of_month ?? 1),
    at_hour: textOf(s?.at_hour ?? 6),
    at_minute: textOf(s?.at_minute ?? 0),
    timezone: s?.timezone ?? "UTC",
    enabled: s?.enabled ?? true,
  };
}

function timingBody(v: FormValues) {
  return {
    frequency: String(v.frequency ?? "daily") as "daily",
    at_hour: numOf(v.at_hour) as number,
    at_minute: numOf(v.at_minute) as number,
    day_of_week: v.frequency === "weekly" ? numOf(v.day_of_week) : null,
    day_of_month: v.frequency === "monthly" ? numOf(v.day_of_month) : null,
    timezone: strOf(v.timezone) ?? "UTC",
    enabled: Boolean(v.enabled),
  };
}

const TIMING_CODES = { invalid_timezone: "timezone", invalid_schedule: "frequency" };

// ---------------------------------------------------------------------------------------------------------------------
// Report definitions

interface SectionValue {
  kind: string;
  title?: string;
  [param: string]: unknown;
}

/** The sections of a definition: kind, optional title, the kind's params (from its schema); add, remove, move up. */
function SectionsEditor({ id, kinds, value, onChange }: { id: string; kinds: SectionKind[]; value: SectionValue[]; onChange: (s: SectionValue[]) => void }) {
  const put = (i: number, s: SectionValue) => onChange(value.map((x, j) => (j === i ? s : x)));
  return (
    <div class="sections" id={id}>
      {value.map((s, i) => {
        const kind = kinds.find((k) => k.kind === s.kind);
        const props = (kind?.params_schema.properties ?? {}) as Record<string, { type?: string; enum?: string[]; default?: unknown }>;
        return (
          <fieldset key={i} class="section-item" data-section={i}>
            <legend>Section {i + 1}</legend>
            <label>
              Kind{" "}
              <select
                aria-label={`Section ${i + 1} kind`}
                value={s.kind}
                onChange={(e) => put(i, { kind: (e.target as HTMLSelectElement).value, title: s.title })}
              >
                {kinds.map((k) => (
                  <option key={k.kind} value={k.kind}>
                    {k.title} ({k.kind})
                  </option>
                ))}
              </select>
            </label>{" "}
            <label>
              Title{" "}
              <input
                aria-label={`Section ${i + 1} title`}
                value={s.title ?? ""}
                placeholder={kind?.title}
                onInput={(e) => put(i, { ...s, title: (e.target as HTMLInputElement).value || undefined })}
              />
            </label>
            {Object.entries(props).map(([p, schema]) => (
              <label key={p}>
                {" "}
                {p.replace(/_/g, " ")}{" "}
                {schema.enum ? (
                  <select
                    aria-label={`Section ${i + 1} ${p}`}
                    value={String(s[p] ?? schema.default ?? "")}
                    onChange={(e) => put(i, { ...s, [p]: (e.target as HTMLSelectElement).value })}
                  >
                    {schema.enum.map((o) => (
                      <option key={o}>{o}</option>
                    ))}
                  </select>
                ) : (
                  <input
                    aria-label={`Section ${i + 1} ${p}`}
                    inputMode="numeric"
                    size={6}
                    value={s[p] === undefined ? "" : String(s[p])}
                    placeholder={schema.default !== undefined ? String(schema.default) : ""}
                    onInput={(e) => {
                      const t = (e.target as HTMLInputElement).value;
                      const next = { ...s };
                      if (t === "") delete next[p];
                      else next[p] = schema.type === "integer" || schema.type === "number" ? (Number.isFinite(Number(t)) ? Number(t) : t) : t;
                      put(i, next);
                    }}
                  />
                )}
              </label>
            ))}{" "}
            <button type="button" class="small link" aria-label={`Remove section ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))}>
              Remove
            </button>
            {i ? (
              <button
                type="button"
                class="small link"
                aria-label={`Move section ${i + 1} up`}
                onClick={() => onChange([...value.slice(0, i - 1), value[i], value[i - 1], ...value.slice(i + 1)])}
              >
                Up
              </button>
            ) : null}
          </fieldset>
        );
      })}
      <button type="button" class="small" onClick={() => onChange([...value, { kind: kinds[0]?.kind ?? "availability" }])}>
        Add section
      </button>
    </div>
  );
}

const sectionsOf = (v: FormValue): SectionValue[] => idsOf(v).map((s) => JSON.parse(s) as SectionValue);
type FormValue = FormValues[string];

type Definitions = Loaded<Definition[]>;

export function ReportDefinitions({ defs }: { defs: Definitions }) {
  const kinds = useLoad(() => unwrapped(api.GET("/api/v1/reports/section-kinds")), []);
  const editor = useEditor();
  const writable = can("ManageConfig");
  const editing = editor.editing && editor.editing !== "new" ? (defs.data ?? []).find((d) => d.id === editor.editing) : null;
  const initial = (d: Definition | null): FormValues => ({
    name: d?.name ?? "",
    description: textOf(d?.description),
    range_days: textOf((d?.spec.range_days as number | undefined) ?? 7),
    sections: ((d?.spec.sections as SectionValue[] | undefined) ?? []).map((s) => JSON.stringify(s)),
  });
  const body = (v: FormValues): Schemas["DefinitionBody"] => ({
    name: String(v.name ?? ""),
    description: strOf(v.description),
    spec: { sections: sectionsOf(v.sections), ...(strOf(v.range_days) ? { range_days: numOf(v.range_days) } : {}) },
  });
  return (
    <Section title="Report definitions">
      <LoadError error={defs.error} />
      <div class="table-wrap">
        <table data-testid="report-definitions">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Sections</th>
              <th scope="col">Range</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {(defs.data ?? []).map((d) => (
              <tr key={d.id} data-definition={d.id}>
                <td>
                  <strong>{d.name}</strong>
                  {d.description ? <small class="muted"> {d.description}</small> : null}
                </td>
                <td>
                  {((d.spec.sections as SectionValue[] | undefined) ?? [])
                    .map((s) => s.title ?? kinds.data?.find((k) => k.kind === s.kind)?.title ?? s.kind)
                    .join(", ") || "–"}
                </td>
                <td>{typeof d.spec.range_days === "number" ? `${d.spec.range_days} days` : "default"}</td>
                <td class="row-actions">
                  {writable ? (
                    <>
                      <EditButton label={`Edit report ${d.name}`} onClick={() => editor.edit(d.id)} />{" "}
                      <DeleteButton
                        label={`Delete report ${d.name}`}
                        onDelete={() => unwrapped(api.DELETE("/api/v1/reports/definitions/{id}", { params: { path: { id: d.id } } })).then(defs.reload)}
                      />
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {writable && kinds.data ? (
        <EditorCard title={editing ? `Edit report ${editing.name}` : "New report definition"}>
          <SettingsForm
            key={editing?.id ?? "new"}
            id={editing ? "report-edit" : "report-form"}
            label={editing ? "Save report" : "Create report"}
            initial={initial(editing ?? null)}
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "description", label: "Description", type: "textarea" },
              { name: "range_days", label: "Range (days)", type: "number", help: "1 to 366." },
              {
                name: "sections",
                label: "Sections",
                type: "custom",
                render: (id, v, set): JSX.Element => (
                  <SectionsEditor
                    id={id}
                    kinds={kinds.data!}
                    value={sectionsOf(v.sections)}
                    onChange={(s) =>
                      set(
                        "sections",
                        s.map((x) => JSON.stringify(x)),
                      )
                    }
                  />
                ),
              },
            ]}
            codeFields={{ unknown_section_kind: "sections", invalid_section_params: "sections", document_too_large: "sections" }}
            submit={(v) =>
              editing
                ? unwrapped(api.PUT("/api/v1/reports/definitions/{id}", { params: { path: { id: editing.id } }, body: body(v) }))
                : unwrapped(api.POST("/api/v1/reports/definitions", { body: body(v) }))
            }
            onDone={() => {
              defs.reload();
              if (editing) editor.close();
            }}
            onCancel={editing ? editor.close : undefined}
          />
        </EditorCard>
      ) : null}
    </Section>
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// Report schedules

export function ReportSchedules({ defs }: { defs: Definitions }) {
  const schedules = useLoad(() => unwrapped(api.GET("/api/v1/reports/schedules", { params: { query: { limit: 200 } as never } })), []);
  const editor = useEditor();
  const writable = can("ManageConfig");
  const editing = editor.editing && editor.editing !== "new" ? (schedules.data ?? []).find((s) => s.id === editor.editing) : null;
  const defName = (id: string) => defs.data?.find((d) => d.id === id)?.name ?? "(a deleted report)";
  const initial = (s: ReportSchedule | null): FormValues => ({
    definition_id: s?.definition_id ?? defs.data?.[0]?.id ?? "",
    channel_ids: s?.channel_ids ?? [],
    ...timingValues(s),
  });
  const body = (v: FormValues): Schemas["ReportScheduleBody"] => ({
    definition_id: String(v.definition_id ?? ""),
    channel_ids: idsOf(v.channel_ids),
    ...timingBody(v),
  });
  return (
    <Section title="Report schedules">
      <LoadError error={schedules.error} />
      <div class="table-wrap">
        <table data-testid="report-schedules">
          <thead>
            <tr>
              <th scope="col">Report</th>
              <th scope="col">When</th>
              <th scope="col">Delivered to</th>
              <th scope="col">Next run</th>
              <th scope="col">State</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {(schedules.data ?? []).map((s) => (
              <tr key={s.id} data-schedule={s.id}>
                <td>
                  <strong>{defName(s.definition_id)}</strong>
                </td>
                <td>{when(s)}</td>
                <td>
                  <RefNames kind="channel" ids={s.channel_ids} />
                </td>
                <td>{fmtTime(s.next_run_at)}</td>
                <td>{s.enabled ? "enabled" : "disabled"}</td>
                <td class="row-actions">
                  {writable ? (
                    <>
                      <EditButton label={`Edit schedule of ${defName(s.definition_id)}`} onClick={() => editor.edit(s.id)} />{" "}
                      <DeleteButton
                        label={`Delete schedule of ${defName(s.definition_id)}`}
                        onDelete={() => unwrapped(api.DELETE("/api/v1/reports/schedules/{id}", { params: { path: { id: s.id } } })).then(schedules.reload)}
                      />
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {schedules.data && !schedules.data.length ? <p class="muted">No report schedules yet.</p> : null}
      {writable && defs.data ? (
        <EditorCard title={editing ? `Edit schedule of ${defName(editing.definition_id)}` : "New report schedule"}>
          <SettingsForm
            key={`${editing?.id ?? "new"}:${defs.data.length}`}
            id={editing ? "report-schedule-edit" : "report-schedule-form"}
            label={editing ? "Save schedule" : "Create schedule"}
            initial={initial(editing ?? null)}
            fields={(v) => [
              { name: "definition_id", label: "Report", type: "select", options: defs.data!.map((d) => ({ value: d.id, label: d.name })) },
              ...timingFields(v),
              {
                name: "channel_ids",
                label: "Deliver to (email channels)",
                type: "multipicker",
                pick: "channel",
                max: 16,
                help: "Each run is mailed with its PDF; none = kept in the run list only.",
              },
            ]}
            codeFields={{ ...TIMING_CODES, unknown_reference: "definition_id" }}
            submit={(v) =>
              editing
                ? unwrapped(api.PUT("/api/v1/reports/schedules/{id}", { params: { path: { id: editing.id } }, body: body(v) }))
                : unwrapped(api.POST("/api/v1/reports/schedules", { body: body(v) }))
            }
            onDone={() => {
              schedules.reload();
              if (editing) editor.close();
            }}
            onCancel={editing ? editor.close : undefined}
          />
        </EditorCard>
      ) : null}
    </Section>
  );
}

// ---------------------------------------------------------------------------------------------------------------------
// Analysis schedules

function analysisFields(tools: Tool[]) {
  return (v: FormValues): FormField[] => {
    const tool = tools.find((t) => t.name === v.tool);
    const fields: FormField[] = [
      { name: "tool", label: "Tool", type: "select", options: tools.map((t) => ({ value: t.name, label: `${t.title}` })), help: tool?.description },
      {
        name: "scope_kind",
        label: "Scope",
        type: "select",
        options: [
          { value: "all", label: "every node I may see" },
          { value: "folder", label: "a folder and beneath" },
          { value: "node", label: "one node" },
        ],
      },
    ];
    if (v.scope_kind === "folder") fields.push({ name: "scope_folder", label: "Folder", type: "picker", pick: "folder", required: true });
    if (v.scope_kind === "node") fields.push({ name: "scope_node", label: "Node", type: "picker", pick: "node", required: true });
    fields.push(...schemaFields(tool?.params_schema, "params."), ...timingFields(v));
    return fields;
  };
}

export function AnalysisSchedules() {
  const schedules = useLoad(() => unwrapped(api.GET("/api/v1/analysis/schedules")), []);
  const tools = useLoad(() => unwrapped(api.GET("/api/v1/analysis/tools")), []);
  const editor = useEditor();
  const writable = can("ManageConfig");
  const editing = editor.editing && editor.editing !== "new" ? (schedules.data ?? []).find((s) => s.id === editor.editing) : null;
  const toolTitle = (name: string) => tools.data?.find((t) => t.name === name)?.title ?? name;
  return (
    <Section title="Analysis schedules">
      <LoadError error={schedules.error} />
      <div class="table-wrap">
        <table data-testid="analysis-schedules">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Scope</th>
              <th scope="col">When</th>
              <th scope="col">Next run</th>
              <th scope="col">State</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {(schedules.data ?? []).map((s) => (
              <tr key={s.id} data-schedule={s.id}>
                <td>
                  <strong>{toolTitle(s.tool)}</strong>
                </td>
                <td>
                  {s.scope_kind === "all" ? (
                    "all"
                  ) : s.scope_id ? (
                    <>
                      {s.scope_kind} <RefName kind={s.scope_kind as "node"} id={s.scope_id} />
                    </>
                  ) : (
                    s.scope_label
                  )}
                </td>
                <td>{when(s)}</td>
                <td>{fmtTime(s.next_run_at)}</td>
                <td>{s.enabled ? "enabled" : "disabled"}</td>
                <td class="row-actions">
                  {writable ? (
                    <>
                      <EditButton label={`Edit analysis schedule ${toolTitle(s.tool)}`} onClick={() => editor.edit(s.id)} />{" "}
                      <DeleteButton
                        label={`Delete analysis schedule ${toolTitle(s.tool)}`}
                        onDelete={() => unwrapped(api.DELETE("/api/v1/analysis/schedules/{id}", { params: { path: { id: s.id } } })).then(schedules.reload)}
                      />
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {schedules.data && !schedules.data.length ? <p class="muted">No analysis schedules yet.</p> : null}
      {writable && tools.data ? (
        <EditorCard title={editing ? `Edit analysis schedule ${toolTitle(editing.tool)}` : "New analysis schedule"}>
          <AnalysisForm key={editing?.id ?? "new"} tools={tools.data} editing={editing ?? null} onDone={schedules.reload} onClose={editor.close} />
        </EditorCard>
      ) : null}
    </Section>
  );
}

function AnalysisForm({ tools, editing, onDone, onClose }: { tools: Tool[]; editing: AnalysisSchedule | null; onDone: () => void; onClose: () => void }) {
  const toolOf = (name: string) => tools.find((t) => t.name === name);
  const start = editing?.tool ?? tools[0]?.name ?? "";
  const initial: FormValues = {
    tool: start,
    scope_kind: editing?.scope_kind ?? "all",
    scope_folder: editing?.scope_kind === "folder" ? editing.scope_id : null,
    scope_node: editing?.scope_kind === "node" ? editing.scope_id : null,
    ...schemaValues(toolOf(start)?.params_schema, "params.", editing?.params ?? {}),
    ...timingValues(editing),
  };
  const body = (v: FormValues): Schemas["AnalysisScheduleBody"] => {
    const kind = String(v.scope_kind ?? "all") as "all" | "folder" | "node";
    return {
      tool: String(v.tool ?? ""),
      scope_kind: kind,
      scope_id: kind === "folder" ? strOf(v.scope_folder) : kind === "node" ? strOf(v.scope_node) : null,
      params: schemaObject(toolOf(String(v.tool))?.params_schema, "params.", v),
      ...timingBody(v),
    };
  };
  return (
    <SettingsForm
      id={editing ? "analysis-schedule-edit" : "analysis-schedule-form"}
      label={editing ? "Save schedule" : "Create schedule"}
      initial={initial}
      fields={analysisFields(tools)}
      codeFields={{ ...TIMING_CODES, unknown_tool: "tool", invalid_params: "tool", not_found: "scope_kind" }}
      submit={(v) =>
        editing
          ? unwrapped(api.PUT("/api/v1/analysis/schedules/{id}", { params: { path: { id: editing.id } }, body: body(v) }))
          : unwrapped(api.POST("/api/v1/analysis/schedules", { body: body(v) }))
      }
      onDone={() => {
        onDone();
        if (editing) onClose();
      }}
      onCancel={editing ? onClose : undefined}
    />
  );
}

/** Reports and analysis on one page: definitions, their schedules, analysis schedules. */
export function Schedules() {
  // One list of definitions for both: a definition made above is at once schedulable below.
  const defs = useLoad(() => unwrapped(api.GET("/api/v1/reports/definitions", { params: { query: { limit: 200 } as never } })), []);
  return (
    <div class="settings-stack">
      <ReportDefinitions defs={defs} />
      <ReportSchedules defs={defs} />
      <AnalysisSchedules />
    </div>
  );
}
