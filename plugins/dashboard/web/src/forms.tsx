// The settings screens' shared pieces: a form with picker, secret and schema-driven fields (ApiForm's behaviour: the
// API's 400 message next to the field it names), names for ids in lists, and who may edit what.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { NmsApiError } from "../../../../clients/typescript/src/index.ts";
import { labelOf, MultiPicker, Picker, type Choice, type PickKind } from "./pickers.tsx";
import { can, sessionState } from "./session.tsx";
import { fieldOfMessage } from "./ui.tsx";

export type FormValue = string | boolean | string[] | null;
export type FormValues = Record<string, FormValue>;

export interface FormField {
  name: string;
  label: string;
  type?: "text" | "number" | "select" | "textarea" | "checkbox" | "secret" | "picker" | "multipicker" | "custom";
  /** select: values, or value/label pairs. */
  options?: (string | { value: string; label: string })[];
  /** picker and multipicker: what is picked; max: at most this many. */
  pick?: PickKind;
  max?: number;
  placeholder?: string;
  required?: boolean;
  help?: string;
  /** secret: a value is stored (empty keeps it; the value is never shown). */
  secretSet?: boolean;
  /** custom: the control itself (it gets the field's id for its label). */
  render?: (id: string, values: FormValues, set: (name: string, v: FormValue) => void) => JSX.Element;
}

/** Who may change global configuration: the permission, and no folder restriction (the API answers scope_unsupported). */
export function canEditGlobal(permission: "ManageConfig" | "ManageSystem"): boolean {
  return can(permission) && sessionState().identity?.scope === "All";
}

export const scopeRestricted = () => {
  const id = sessionState().identity;
  return id !== null && id.scope !== "All";
};

/** A page's load error, saying why in the words of the case (a folder-restricted account on global configuration). */
export function LoadError({ error }: { error: NmsApiError | null }) {
  if (!error) return null;
  const text =
    error.code === "scope_unsupported"
      ? "This is global configuration: an account restricted to folders can neither see nor change it."
      : error.status === 403
        ? "Your role may not see this."
        : error.status === 401
          ? "Sign in to see this."
          : error.message;
  return (
    <p class="error" role="alert" data-code={error.code}>
      {text}
    </p>
  );
}

const idOf = (form: string, name: string) => `${form}-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/** A number from a form value ("" → null; text that is no number is sent as is, so the API names the field). */
export const numOf = (v: FormValue | undefined): number | null => {
  if (v === undefined || v === null || v === "" || typeof v !== "string") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : (v as unknown as number);
};
export const strOf = (v: FormValue | undefined): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);
export const idsOf = (v: FormValue | undefined): string[] => (Array.isArray(v) ? v : []);
export const textOf = (v: number | string | null | undefined): string => (v === null || v === undefined ? "" : String(v));

/**
 * A create or edit form. `fields` may depend on the values (a kind select changes the fields shown). A 400's message
 * is shown next to the field it names (else the one `codeFields` maps its code to), else above the buttons.
 */
export function SettingsForm({
  id,
  fields,
  initial,
  submit,
  label,
  onDone,
  onCancel,
  codeFields = {},
  onField,
}: {
  id: string;
  fields: FormField[] | ((values: FormValues) => FormField[]);
  initial: FormValues;
  submit: (values: FormValues) => Promise<unknown>;
  label: string;
  onDone?: () => void;
  onCancel?: () => void;
  codeFields?: Record<string, string>;
  /** Told of each change (a kind select that swaps the whole form). */
  onField?: (name: string, v: FormValue) => void;
}) {
  const [values, setValues] = useState<FormValues>(initial);
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [ok, setOk] = useState(false);
  const shown = typeof fields === "function" ? fields(values) : fields;
  const set = (name: string, v: FormValue) => {
    setValues((s) => ({ ...s, [name]: v }));
    onField?.(name, v);
  };
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setOk(false);
    try {
      await submit(values);
      setOk(true);
      // A create form starts over (no double create, no typed secret left in a box); an edit form is closed by onDone.
      if (!onCancel) setValues(initial);
      onDone?.();
    } catch (err) {
      const message = (err as Error).message;
      const code = err instanceof NmsApiError ? err.code : "";
      const names = shown.map((f) => f.name);
      const byCode = codeFields[code];
      // The field the message names wins; else the field the code belongs to.
      setError({ field: fieldOfMessage(message, names) ?? (byCode && names.includes(byCode) ? byCode : null), message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form id={id} onSubmit={onSubmit} class="form" noValidate>
      {shown.map((f) => {
        const fid = idOf(id, f.name);
        const bad = error?.field === f.name;
        const common = { id: fid, name: f.name, "aria-invalid": bad ? (true as const) : undefined, "aria-describedby": bad ? `${fid}-error` : undefined };
        const v = values[f.name];
        let control: JSX.Element;
        switch (f.type) {
          case "select":
            control = (
              <select {...common} value={String(v ?? "")} onChange={(e) => set(f.name, (e.target as HTMLSelectElement).value)}>
                {(f.options ?? []).map((o) => {
                  const [value, text] = typeof o === "string" ? [o, o || "—"] : [o.value, o.label];
                  return (
                    <option key={value} value={value}>
                      {text}
                    </option>
                  );
                })}
              </select>
            );
            break;
          case "textarea":
            control = (
              <textarea
                {...common}
                rows={4}
                value={String(v ?? "")}
                placeholder={f.placeholder}
                onInput={(e) => set(f.name, (e.target as HTMLTextAreaElement).value)}
              />
            );
            break;
          case "checkbox":
            control = <input {...common} type="checkbox" checked={Boolean(v)} onChange={(e) => set(f.name, (e.target as HTMLInputElement).checked)} />;
            break;
          case "secret":
            // Write-only: the stored value is never sent to the browser; an empty box keeps it.
            control = (
              <input
                {...common}
                type="password"
                autocomplete="new-password"
                value={String(v ?? "")}
                placeholder={f.secretSet ? "stored: leave empty to keep" : f.placeholder}
                onInput={(e) => set(f.name, (e.target as HTMLInputElement).value)}
              />
            );
            break;
          case "picker":
            control = <Picker id={fid} kind={f.pick!} label={f.label} value={typeof v === "string" && v ? v : null} onChange={(x) => set(f.name, x)} />;
            break;
          case "multipicker":
            control = <MultiPicker id={fid} kind={f.pick!} label={f.label} value={idsOf(v)} max={f.max} onChange={(x) => set(f.name, x)} />;
            break;
          case "custom":
            control = f.render!(fid, values, set);
            break;
          default:
            control = (
              <input
                {...common}
                type="text"
                inputMode={f.type === "number" ? ("decimal" as const) : undefined}
                value={String(v ?? "")}
                placeholder={f.placeholder}
                onInput={(e) => set(f.name, (e.target as HTMLInputElement).value)}
              />
            );
        }
        return (
          <div class={`field ${bad ? "invalid" : ""}`} key={f.name} data-field={f.name}>
            <label for={fid}>
              {f.label}
              {f.required ? " *" : ""}
            </label>
            {control}
            {f.type === "secret" && f.secretSet ? (
              <small class="muted" data-testid="secret-kept">
                A value is stored (never shown). Leave empty to keep it.
              </small>
            ) : null}
            {f.help ? <small class="muted">{f.help}</small> : null}
            {bad ? (
              <span class="field-error" id={`${fid}-error`} role="alert">
                {error!.message}
              </span>
            ) : null}
          </div>
        );
      })}
      {error && !error.field ? (
        <p class="error" role="alert">
          {error.message}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {label}
        </button>
        {onCancel ? (
          <button type="button" class="link" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
        {ok ? (
          <span class="ok" role="status">
            Saved.
          </span>
        ) : null}
      </div>
    </form>
  );
}

/** JSON-schema property (the subset the kinds' and tools' schemas use). */
interface Prop {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Prop;
}

const WORDS: Record<string, string> = { url: "URL", ca: "CA", cert: "certificate", hmac: "HMAC", ms: "(ms)", secs: "(s)", id: "ID" };
/** A schema key as a label: "ca_cert" → "CA certificate", "timeout_ms" → "Timeout (ms)". */
const human = (key: string) => {
  const words = key
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split("_")
    .map((w) => WORDS[w] ?? w);
  const text = words.join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
};
const typesOf = (p: Prop) => (Array.isArray(p.type) ? p.type : p.type ? [p.type] : []);

/**
 * Form fields for the properties of a JSON schema (a channel kind's config, a report section's or analysis tool's
 * params), named `${prefix}${key}`. Secret properties become write-only fields.
 */
export function schemaFields(
  schema: Record<string, unknown> | undefined,
  prefix: string,
  opts: { secrets?: string[]; secretsSet?: string[] } = {},
): FormField[] {
  const props = (schema?.properties ?? {}) as Record<string, Prop>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([key, p]) => {
    const types = typesOf(p);
    const name = `${prefix}${key}`;
    const limits = [
      p.minimum !== undefined && p.maximum !== undefined ? `${p.minimum} to ${p.maximum}` : "",
      p.default !== undefined && p.default !== null ? `default ${String(p.default)}` : "",
    ]
      .filter(Boolean)
      .join("; ");
    const help = [p.description, limits].filter(Boolean).join(" — ") || undefined;
    const base = { name, label: human(key), required: required.has(key), help };
    if (opts.secrets?.includes(key)) return { ...base, type: "secret" as const, secretSet: opts.secretsSet?.includes(key) ?? false };
    if (p.enum) return { ...base, type: "select" as const, options: [...(required.has(key) ? [] : [""]), ...p.enum.map(String)] };
    if (types.includes("boolean")) return { ...base, type: "checkbox" as const };
    if (types.includes("integer") || types.includes("number")) return { ...base, type: "number" as const };
    if (types.includes("array")) return { ...base, type: "textarea" as const, help: `One per line or comma-separated. ${help ?? ""}`.trim() };
    if ((p.maxLength ?? 0) > 4096) return { ...base, type: "textarea" as const };
    return { ...base, type: "text" as const };
  });
}

/** Form values of an object for schemaFields' fields (arrays one per line; absent → the schema's default, if any). */
export function schemaValues(
  schema: Record<string, unknown> | undefined,
  prefix: string,
  data: Record<string, unknown> = {},
  secrets: string[] = [],
): FormValues {
  const props = (schema?.properties ?? {}) as Record<string, Prop>;
  const out: FormValues = {};
  for (const [key, p] of Object.entries(props)) {
    if (secrets.includes(key)) {
      out[`${prefix}${key}`] = "";
      continue;
    }
    const v = key in data ? data[key] : p.default;
    if (typesOf(p).includes("boolean")) out[`${prefix}${key}`] = Boolean(v);
    else if (Array.isArray(v)) out[`${prefix}${key}`] = v.map(String).join("\n");
    else out[`${prefix}${key}`] = v === null || v === undefined ? "" : String(v);
  }
  return out;
}

/**
 * The object the form's schema fields describe. Empty optional fields are left out; an empty secret is left out (the
 * API keeps the stored one) unless `clearSecrets` names it (then null: clear).
 */
export function schemaObject(
  schema: Record<string, unknown> | undefined,
  prefix: string,
  values: FormValues,
  clearSecrets: string[] = [],
): Record<string, unknown> {
  const props = (schema?.properties ?? {}) as Record<string, Prop>;
  const out: Record<string, unknown> = {};
  for (const [key, p] of Object.entries(props)) {
    const v = values[`${prefix}${key}`];
    const types = typesOf(p);
    if (clearSecrets.includes(key)) {
      out[key] = null;
      continue;
    }
    if (types.includes("boolean")) out[key] = Boolean(v);
    else if (v === undefined || v === null || v === "") continue;
    else if (types.includes("array"))
      out[key] = String(v)
        .split(/[\n,]/)
        .map((s) => s.trim())
        .filter(Boolean);
    else if (!p.enum && (types.includes("integer") || types.includes("number"))) out[key] = numOf(v);
    else out[key] = v;
  }
  return out;
}

// Names of ids, cached for the page's life (a renamed row shows its new name after a reload of the app).
const names = new Map<string, Promise<Choice>>();

export function nameOf(kind: PickKind, id: string): Promise<Choice> {
  const key = `${kind}:${id}`;
  let p = names.get(key);
  if (!p) {
    p = labelOf(kind, id);
    names.set(key, p);
  }
  return p;
}

/** Forgets cached names (after an edit renames a row). */
export function forgetNames(): void {
  names.clear();
}

/** The name of a node, folder, channel, profile or credential; the id only while loading or when it cannot be read. */
export function RefName({ kind, id }: { kind: PickKind; id: string }) {
  const [label, setLabel] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    void nameOf(kind, id).then((c) => !gone && setLabel(c.label));
    return () => {
      gone = true;
    };
  }, [kind, id]);
  return (
    <span class="ref" data-ref={id} title={label && label !== id ? undefined : id}>
      {label ?? "…"}
    </span>
  );
}

/** A comma-separated list of names. */
export function RefNames({ kind, ids, empty = "–" }: { kind: PickKind; ids: string[]; empty?: string }) {
  if (!ids.length) return <>{empty}</>;
  return (
    <>
      {ids.map((id, i) => (
        <span key={id}>
          {i ? ", " : ""}
          <RefName kind={kind} id={id} />
        </span>
      ))}
    </>
  );
}

/** A delete button with its error beside it; asks first. */
export function DeleteButton({ onDelete, label }: { onDelete: () => Promise<unknown>; label: string }) {
  const [error, setError] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
  if (asking)
    return (
      <span class="confirm">
        <button
          type="button"
          class="small danger"
          aria-label={`Confirm: ${label}`}
          onClick={() => {
            setError(null);
            setAsking(false);
            onDelete().catch((e: Error) => setError(e.message));
          }}
        >
          Really delete
        </button>{" "}
        <button type="button" class="small link" onClick={() => setAsking(false)}>
          Keep
        </button>
      </span>
    );
  return (
    <>
      <button type="button" class="small danger" aria-label={label} onClick={() => setAsking(true)}>
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

/**
 * A list with an editor: `editing` is null (no form), "new" or a row's id. The editor shows under the list, keyed by
 * what it edits so a new row's form starts empty.
 */
export function useEditor() {
  const [editing, setEditing] = useState<string | null>(null);
  return {
    editing,
    edit: (id: string) => {
      setEditing(id);
      // Bring the form into view: the list may be long.
      setTimeout(() => document.querySelector("form.editing")?.scrollIntoView({ block: "nearest" }), 0);
    },
    create: () => setEditing("new"),
    close: () => setEditing(null),
  };
}

export function EditButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" class="small" aria-label={label} onClick={onClick}>
      Edit
    </button>
  );
}

/** The editing panel: a titled card around a form. */
export function EditorCard({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="card editor" aria-label={title}>
      <header>
        <h2>{title}</h2>
      </header>
      {children}
    </section>
  );
}
