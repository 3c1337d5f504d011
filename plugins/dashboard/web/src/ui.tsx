// Small shared pieces: hand-written SVG charts (no chart library), formatting, error display and a form with field errors.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { NmsApiError } from "../../../../clients/typescript/src/index.ts";

export const fmtBps = (v: number | null | undefined) => {
  if (v === null || v === undefined) return "–";
  const units = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"];
  let i = 0;
  let x = v;
  while (Math.abs(x) >= 1000 && i < units.length - 1) {
    x /= 1000;
    i++;
  }
  return `${x.toFixed(x < 10 && i ? 2 : 0)} ${units[i]}`;
};
export const fmtBytes = (v: number | null | undefined) => {
  if (v === null || v === undefined) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  let x = v;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toFixed(i ? 1 : 0)} ${units[i]}`;
};
export const fmtTime = (t: string | number | null | undefined) => (t === null || t === undefined ? "–" : new Date(t).toLocaleString());
export const fmtPct = (v: number | null | undefined) => (v === null || v === undefined ? "–" : `${v.toFixed(1)} %`);

export function ErrorNote({ error }: { error: NmsApiError | null }) {
  if (!error) return null;
  const text = error.status === 401 ? "Sign in to see this." : error.status === 403 ? "Your role may not see this." : error.message;
  return (
    <p class="error" role="alert" data-code={error.code}>
      {text}
    </p>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge sev-${value}`}>{value}</span>;
}

/** A line chart of one or more series over time (ms). */
export function LineChart({
  series,
  label,
  format = (v: number) => String(Math.round(v)),
  height = 140,
}: {
  series: { name: string; points: { t: number; v: number }[]; color: string }[];
  label: string;
  format?: (v: number) => string;
  height?: number;
}) {
  const W = 600;
  const H = height;
  const all = series.flatMap((s) => s.points);
  if (!all.length) return <p class="muted">No data in this window.</p>;
  const t0 = Math.min(...all.map((p) => p.t));
  const t1 = Math.max(...all.map((p) => p.t), t0 + 1);
  const vmax = Math.max(...all.map((p) => p.v), 1);
  const x = (t: number) => 40 + ((t - t0) / (t1 - t0)) * (W - 50);
  const y = (v: number) => H - 20 - (v / vmax) * (H - 30);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label}>
        <line x1="40" y1={H - 20} x2={W - 10} y2={H - 20} class="axis" />
        <text x="2" y="14" class="tick">
          {format(vmax)}
        </text>
        <text x="40" y={H - 4} class="tick">
          {new Date(t0).toLocaleTimeString()}
        </text>
        <text x={W - 10} y={H - 4} class="tick" text-anchor="end">
          {new Date(t1).toLocaleTimeString()}
        </text>
        {series.map((s) => (
          <polyline
            key={s.name}
            fill="none"
            stroke={s.color}
            stroke-width="2"
            points={s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ")}
          />
        ))}
      </svg>
      <figcaption>
        {series.map((s) => (
          <span key={s.name} class="legend">
            <i style={{ background: s.color }} /> {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

const KIND_COLORS: Record<string, string> = { syslog: "#3b82f6", trap: "#f59e0b", flow: "#10b981", other: "#9ca3af" };

/** Stacked bars per time bucket, split by kind. */
export function StackedBars({ buckets, label }: { buckets: { t: number; parts: Record<string, number> }[]; label: string }) {
  const W = 600;
  const H = 140;
  if (!buckets.length) return <p class="muted">No events in this window.</p>;
  const max = Math.max(...buckets.map((b) => Object.values(b.parts).reduce((a, c) => a + c, 0)), 1);
  const bw = (W - 50) / buckets.length;
  const kinds = [...new Set(buckets.flatMap((b) => Object.keys(b.parts)))];
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label}>
        <text x="2" y="14" class="tick">
          {max}
        </text>
        {buckets.map((b, i) => {
          let acc = 0;
          return kinds.map((k) => {
            const v = b.parts[k] ?? 0;
            const h = (v / max) * (H - 30);
            acc += h;
            return v ? (
              <rect key={`${i}-${k}`} x={40 + i * bw} y={H - 20 - acc} width={Math.max(bw - 1, 1)} height={h} fill={KIND_COLORS[k] ?? KIND_COLORS.other}>
                <title>{`${new Date(b.t).toLocaleString()} ${k}: ${v}`}</title>
              </rect>
            ) : null;
          });
        })}
      </svg>
      <figcaption>
        {kinds.map((k) => (
          <span key={k} class="legend">
            <i style={{ background: KIND_COLORS[k] ?? KIND_COLORS.other }} /> {k}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/** Weekday × hour heatmap of alert fires. */
export function Heatmap({ cells }: { cells: { weekday: number; hour: number; count: number }[] }) {
  const max = Math.max(1, ...cells.map((c) => c.count));
  const at = new Map(cells.map((c) => [`${c.weekday}:${c.hour}`, c.count]));
  return (
    <svg viewBox="0 0 520 160" class="heatmap" role="img" aria-label="Alert fires by weekday and hour">
      {DAYS.map((d, w) => (
        <text key={d} x="0" y={w * 20 + 14} class="tick">
          {d}
        </text>
      ))}
      {DAYS.flatMap((_, w) =>
        Array.from({ length: 24 }, (_, h) => {
          const n = at.get(`${w}:${h}`) ?? 0;
          return (
            <rect
              key={`${w}:${h}`}
              x={32 + h * 20}
              y={w * 20}
              width="18"
              height="18"
              rx="2"
              fill={n ? `rgba(220,38,38,${0.15 + (0.85 * n) / max})` : "var(--cell)"}
            >
              <title>{`${DAYS[w]} ${h}:00 — ${n} fires`}</title>
            </rect>
          );
        }),
      )}
      {[0, 6, 12, 18].map((h) => (
        <text key={h} x={32 + h * 20} y="156" class="tick">
          {h}h
        </text>
      ))}
    </svg>
  );
}

export function ProgressBar({ value, max, label }: { value: number; max: number; label: string }) {
  return <progress value={value} max={Math.max(max, 1)} aria-label={label} />;
}

export interface Field {
  name: string;
  label: string;
  type?: "text" | "number" | "select" | "textarea" | "checkbox";
  options?: string[];
  placeholder?: string;
  required?: boolean;
  help?: string;
}

/** Which field an API validation message names (`"warning_above" must be …`, `unknown field "x"`, `The metric …`). */
export function fieldOfMessage(message: string, fields: string[]): string | null {
  for (const f of fields) if (new RegExp(`"${f}(?:[".\\[])`).test(message)) return f;
  for (const f of fields) if (new RegExp(`\\b${f}\\b`).test(message)) return f;
  return null;
}

/**
 * A form whose submit sends `toBody(values)`; a 400's message is shown next to the field it names (else above the
 * buttons), with aria-invalid and aria-describedby so screen readers announce it.
 */
export function ApiForm({
  id,
  fields,
  submit,
  label,
  initial = {},
  onDone,
}: {
  id: string;
  fields: Field[];
  submit: (values: Record<string, string | boolean>) => Promise<unknown>;
  label: string;
  initial?: Record<string, string | boolean>;
  onDone?: () => void;
}) {
  const [values, setValues] = useState<Record<string, string | boolean>>(initial);
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [ok, setOk] = useState(false);
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setOk(false);
    try {
      await submit(values);
      setOk(true);
      onDone?.();
    } catch (err) {
      const message = err instanceof NmsApiError ? err.message : (err as Error).message;
      setError({
        field: fieldOfMessage(
          message,
          fields.map((f) => f.name),
        ),
        message,
      });
    } finally {
      setBusy(false);
    }
  };
  const set = (name: string, v: string | boolean) => setValues((s) => ({ ...s, [name]: v }));
  return (
    <form id={id} onSubmit={onSubmit} class="form" noValidate>
      {fields.map((f) => {
        const fid = `${id}-${f.name}`;
        const bad = error?.field === f.name;
        const common = { id: fid, name: f.name, "aria-invalid": bad ? (true as const) : undefined, "aria-describedby": bad ? `${fid}-error` : undefined };
        const v = values[f.name];
        return (
          <div class={`field ${bad ? "invalid" : ""}`} key={f.name}>
            <label for={fid}>
              {f.label}
              {f.required ? " *" : ""}
            </label>
            {f.type === "select" ? (
              <select {...common} value={String(v ?? "")} onChange={(e) => set(f.name, (e.target as HTMLSelectElement).value)}>
                {(f.options ?? []).map((o) => (
                  <option key={o} value={o}>
                    {o || "—"}
                  </option>
                ))}
              </select>
            ) : f.type === "textarea" ? (
              <textarea
                {...common}
                rows={4}
                value={String(v ?? "")}
                placeholder={f.placeholder}
                onInput={(e) => set(f.name, (e.target as HTMLTextAreaElement).value)}
              />
            ) : f.type === "checkbox" ? (
              <input {...common} type="checkbox" checked={Boolean(v)} onChange={(e) => set(f.name, (e.target as HTMLInputElement).checked)} />
            ) : (
              <input
                {...common}
                type="text"
                inputMode={f.type === "number" ? ("decimal" as const) : undefined}
                value={String(v ?? "")}
                placeholder={f.placeholder}
                onInput={(e) => set(f.name, (e.target as HTMLInputElement).value)}
              />
            )}
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
        {ok ? (
          <span class="ok" role="status">
            Saved.
          </span>
        ) : null}
      </div>
    </form>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <header>
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A number from a form value ("" → null). */
export const num = (v: string | boolean | undefined): number | null => {
  if (v === undefined || v === "" || typeof v === "boolean") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : (v as unknown as number);
};
export const str = (v: string | boolean | undefined): string | null => (v === undefined || v === "" || typeof v === "boolean" ? null : v);
