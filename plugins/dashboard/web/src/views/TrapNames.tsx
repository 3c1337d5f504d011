// Trap names: the built-in table (read-only) and the OIDs users named (add, rename, delete with ManageConfig).
import { useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, can, unwrapped } from "../session.tsx";
import { ApiForm, Section, str } from "../ui.tsx";

type TrapName = Schemas["TrapNameView"];

export function TrapNames({ rows, onChanged }: { rows: TrapName[]; onChanged: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<TrapName | null>(null);
  const builtin = rows.filter((r) => r.builtin);
  const mine = rows.filter((r) => !r.builtin);
  const remove = async (r: TrapName) => {
    setError(null);
    try {
      await unwrapped(api.DELETE("/api/v1/events/trap-names/{id}", { params: { path: { id: r.id! } } }));
      onChanged();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const body = (v: Record<string, string | boolean>) => ({
    oid: String(v.oid ?? "").trim(),
    name: String(v.name ?? ""),
    kind: (v.kind || "notification") as "notification" | "object",
    description: str(v.description),
  });
  return (
    <Section title="Trap names">
      <p class="muted">
        {builtin.length} built-in names of common MIB notifications and varbind objects; {mine.length} added here. A name added for a built-in OID replaces the
        built-in one.
      </p>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="table-wrap">
        <table data-testid="trap-names">
          <thead>
            <tr>
              <th scope="col">OID</th>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Description</th>
              {can("ManageConfig") ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {mine.map((r) => (
              <tr key={r.id} data-oid={r.oid}>
                <td>{r.oid}</td>
                <td>{r.name}</td>
                <td>{r.kind}</td>
                <td>{r.description ?? ""}</td>
                {can("ManageConfig") ? (
                  <td>
                    <button type="button" class="small" onClick={() => setEditing(r)} aria-label={`Edit ${r.name}`}>
                      Edit
                    </button>{" "}
                    <button type="button" class="small" onClick={() => void remove(r)} aria-label={`Delete ${r.name}`}>
                      Delete
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
            {!mine.length ? (
              <tr>
                <td colSpan={5} class="muted">
                  No names added.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      {can("ManageConfig") ? (
        <ApiForm
          key={editing?.id ?? "new"}
          id={editing ? "trap-name-edit" : "trap-name-new"}
          label={editing ? "Save trap name" : "Add trap name"}
          initial={editing ? { oid: editing.oid, name: editing.name, kind: editing.kind, description: editing.description ?? "" } : { kind: "notification" }}
          fields={[
            { name: "oid", label: "OID", required: true, placeholder: "1.3.6.1.4.1.…" },
            { name: "name", label: "Name", required: true, placeholder: "ACME-MIB::fanFailure" },
            { name: "kind", label: "Kind", type: "select", options: ["notification", "object"], help: "object: a varbind's object, named with its instance" },
            { name: "description", label: "Description" },
          ]}
          submit={async (v) => {
            if (editing) await unwrapped(api.PUT("/api/v1/events/trap-names/{id}", { params: { path: { id: editing.id! } }, body: body(v) }));
            else await unwrapped(api.POST("/api/v1/events/trap-names", { body: body(v) }));
          }}
          onDone={() => {
            setEditing(null);
            onChanged();
          }}
        />
      ) : null}
      <details>
        <summary>Built-in names ({builtin.length})</summary>
        <ul class="builtin-names">
          {builtin.map((r) => (
            <li key={r.oid}>
              <code>{r.oid}</code> {r.name}
            </li>
          ))}
        </ul>
      </details>
    </Section>
  );
}
