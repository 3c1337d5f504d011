// Reference fields as pickers that search by name: a node, folder, credential, channel or profile is chosen by what a
// person knows (its name, an address), and the form still sends the id. A combobox in the WAI-ARIA pattern: type to
// search, arrows to move, Enter to choose, Escape to close.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, unwrapped } from "./session.tsx";

export type PickKind = "node" | "folder" | "credential" | "channel" | "profile";

export interface Choice {
  id: string;
  label: string;
  /** A second line: an address, a kind, a folder. */
  hint?: string;
}

const MAX_CHOICES = 20;

const matches = (q: string, ...texts: (string | null | undefined)[]) => {
  const needle = q.trim().toLowerCase();
  return !needle || texts.some((t) => t?.toLowerCase().includes(needle));
};

/** Choices for `q`. Nodes are searched by the API (name, or an exact address); the shorter lists are filtered here. */
export async function searchChoices(kind: PickKind, q: string): Promise<Choice[]> {
  switch (kind) {
    case "node": {
      const looksLikeAddress = /^[0-9a-f:.]+$/i.test(q.trim()) && /[.:]/.test(q);
      const query = looksLikeAddress ? { address: q.trim(), limit: MAX_CHOICES } : { q: q.trim() || undefined, limit: MAX_CHOICES };
      const rows = await unwrapped(api.GET("/api/v1/nodes", { params: { query } }));
      return rows.map((n) => ({ id: n.id, label: n.name, hint: n.address }));
    }
    case "folder": {
      const rows = await unwrapped(api.GET("/api/v1/node-groups", { params: { query: { q: q.trim() || undefined, limit: MAX_CHOICES } } }));
      return rows.map((f) => ({ id: f.id, label: f.name }));
    }
    case "credential": {
      const rows = await unwrapped(api.GET("/api/v1/credentials", { params: { query: { limit: 200 } } }));
      return rows
        .filter((c) => matches(q, c.name, c.kind))
        .slice(0, MAX_CHOICES)
        .map((c) => ({ id: c.id, label: c.name, hint: c.kind }));
    }
    case "channel": {
      const rows = await unwrapped(api.GET("/api/v1/notification-channels", { params: { query: { limit: 200 } } }));
      return rows
        .filter((c) => matches(q, c.name, c.kind))
        .slice(0, MAX_CHOICES)
        .map((c) => ({ id: c.id, label: c.name, hint: c.kind }));
    }
    case "profile": {
      const rows = await unwrapped(api.GET("/api/v1/profiles", { params: { query: { limit: 200 } } }));
      return rows
        .filter((p) => matches(q, p.name))
        .slice(0, MAX_CHOICES)
        .map((p) => ({ id: p.id, label: p.name }));
    }
  }
}

/** The name of one id (for a form opened on an existing row), or the id itself when it cannot be read. */
export async function labelOf(kind: PickKind, id: string): Promise<Choice> {
  try {
    switch (kind) {
      case "node": {
        const n = await unwrapped(api.GET("/api/v1/nodes/{id}", { params: { path: { id } } }));
        return { id, label: n.name, hint: n.address };
      }
      case "folder": {
        const f = await unwrapped(api.GET("/api/v1/node-groups/{id}", { params: { path: { id } } }));
        return { id, label: f.name };
      }
      case "credential": {
        const c = await unwrapped(api.GET("/api/v1/credentials/{id}", { params: { path: { id } } }));
        return { id, label: c.name, hint: c.kind };
      }
      case "channel": {
        const c = await unwrapped(api.GET("/api/v1/notification-channels/{id}", { params: { path: { id } } }));
        return { id, label: c.name, hint: c.kind };
      }
      case "profile": {
        const p = await unwrapped(api.GET("/api/v1/profiles/{id}", { params: { path: { id } } }));
        return { id, label: p.name };
      }
    }
  } catch {
    return { id, label: id };
  }
}

/** The search box and its list; `onPick` gets the chosen row. */
function Combobox({
  id,
  kind,
  label,
  text,
  setText,
  onPick,
  exclude = [],
  required,
}: {
  id: string;
  kind: PickKind;
  label: string;
  text: string;
  setText: (t: string) => void;
  onPick: (c: Choice) => void;
  exclude?: string[];
  required?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [choices, setChoices] = useState<Choice[]>([]);
  const [active, setActive] = useState(0);
  const [failed, setFailed] = useState<string | null>(null);
  const seq = useRef(0);
  // The close a blur schedules (so a click on an option lands first); a later focus or key cancels it, since a busy
  // page may run that timer after the input events that came after it.
  const closing = useRef<ReturnType<typeof setTimeout> | null>(null);
  const keepOpen = () => {
    if (closing.current) clearTimeout(closing.current);
    closing.current = null;
    setOpen(true);
  };
  useEffect(() => {
    if (!open) return;
    const mine = ++seq.current;
    // A short pause so typing a name costs one request, not one per key.
    const timer = setTimeout(() => {
      searchChoices(kind, text).then(
        (rows) => {
          if (mine !== seq.current) return;
          setChoices(rows.filter((r) => !exclude.includes(r.id)));
          setActive(0);
          setFailed(null);
        },
        (e: Error) => mine === seq.current && setFailed(e.message),
      );
    }, 150);
    return () => clearTimeout(timer);
  }, [open, text, kind, exclude.join(",")]);
  const listId = `${id}-list`;
  const choose = (c: Choice) => {
    onPick(c);
    setOpen(false);
  };
  return (
    <div class="picker">
      <input
        id={id}
        type="text"
        role="combobox"
        autocomplete="off"
        aria-label={label}
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={open && choices[active] ? `${listId}-${active}` : undefined}
        aria-required={required ? true : undefined}
        placeholder={`Search ${kind}s by name`}
        value={text}
        onFocus={keepOpen}
        onBlur={() => {
          closing.current = setTimeout(() => setOpen(false), 150);
        }}
        onInput={(e) => {
          setText((e.target as HTMLInputElement).value);
          keepOpen();
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") {
            e.preventDefault();
            setOpen(true);
            setActive((a) => Math.min(a + 1, choices.length - 1));
          } else if (e.key === "ArrowUp") {
            e.preventDefault();
            setActive((a) => Math.max(a - 1, 0));
          } else if (e.key === "Enter" && open && choices[active]) {
            e.preventDefault();
            choose(choices[active]);
          } else if (e.key === "Escape") setOpen(false);
        }}
      />
      {open ? (
        <ul id={listId} role="listbox" class="picker-list" aria-label={`${label}: choices`}>
          {failed ? <li class="error">{failed}</li> : null}
          {!failed && !choices.length ? <li class="muted">No match</li> : null}
          {choices.map((c, i) => (
            <li
              key={c.id}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              data-id={c.id}
              // mousedown, not click: it comes before the input's blur closes the list.
              onMouseDown={(e) => {
                e.preventDefault();
                choose(c);
              }}
            >
              {c.label}
              {c.hint ? <small class="muted"> {c.hint}</small> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** One reference: shows the chosen row's name, sends its id (null when cleared). */
export function Picker({
  id,
  kind,
  label,
  value,
  onChange,
  required,
}: {
  id: string;
  kind: PickKind;
  label: string;
  value: string | null;
  onChange: (id: string | null, choice: Choice | null) => void;
  required?: boolean;
}) {
  const [text, setText] = useState("");
  useEffect(() => {
    if (!value) return setText("");
    let gone = false;
    void labelOf(kind, value).then((c) => !gone && setText(c.label));
    return () => {
      gone = true;
    };
  }, [kind, value]);
  return (
    <div class="picker-one">
      <Combobox
        id={id}
        kind={kind}
        label={label}
        text={text}
        required={required}
        setText={(t) => {
          setText(t);
          if (!t) onChange(null, null);
        }}
        onPick={(c) => {
          setText(c.label);
          onChange(c.id, c);
        }}
      />
    </div>
  );
}

/** Several references (threshold scopes, routing channels): chips with a remove button, and a search box to add. */
export function MultiPicker({
  id,
  kind,
  label,
  value,
  onChange,
  max,
}: {
  id: string;
  kind: PickKind;
  label: string;
  value: string[];
  onChange: (ids: string[]) => void;
  max?: number;
}) {
  const [text, setText] = useState("");
  const [names, setNames] = useState<Record<string, Choice>>({});
  useEffect(() => {
    const missing = value.filter((v) => !names[v]);
    if (!missing.length) return;
    let gone = false;
    void Promise.all(missing.map((v) => labelOf(kind, v))).then((cs) => !gone && setNames((n) => ({ ...n, ...Object.fromEntries(cs.map((c) => [c.id, c])) })));
    return () => {
      gone = true;
    };
  }, [kind, value.join(",")]);
  const full = max !== undefined && value.length >= max;
  return (
    <div class="picker-many">
      <ul class="chips" aria-label={`${label}: chosen`}>
        {value.map((v) => (
          <li key={v} data-id={v}>
            {names[v]?.label ?? v}
            <button type="button" class="small link" aria-label={`Remove ${names[v]?.label ?? v}`} onClick={() => onChange(value.filter((x) => x !== v))}>
              ×
            </button>
          </li>
        ))}
      </ul>
      {full ? null : (
        <Combobox
          id={id}
          kind={kind}
          label={label}
          text={text}
          setText={setText}
          exclude={value}
          onPick={(c) => {
            setNames((n) => ({ ...n, [c.id]: c }));
            setText("");
            onChange([...value, c.id]);
          }}
        />
      )}
    </div>
  );
}
