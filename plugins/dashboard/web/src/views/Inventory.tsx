// Inventory: add a device (with a live SNMP test), credentials (create, rotate; secrets write-only), discovery sweeps
// with live progress, their review and import.
import { Fragment } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import type { SweepProgressEvent } from "../../../../../clients/typescript/src/realtime.ts";
import { MultiPicker, Picker } from "../pickers.tsx";
import { api, can, sessionState, throttled, unwrapped, useLive, useLoad } from "../session.tsx";
import { ErrorNote, fmtTime, ProgressBar, Section } from "../ui.tsx";

type Probe = Schemas["SnmpProbeResult"];
type Credential = Schemas["CredentialView"];

const allScope = () => sessionState().identity?.scope === "All";

export function Inventory() {
  if (!can("ManageConfig")) {
    return (
      <Section title="Inventory">
        <p class="muted">Your role may not change the inventory.</p>
      </Section>
    );
  }
  return (
    <div class="grid">
      <AddDevice />
      {allScope() ? <Credentials /> : null}
      {allScope() ? <Discovery /> : null}
    </div>
  );
}

function field(id: string, label: string, value: string, onInput: (v: string) => void, extra: Record<string, unknown> = {}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} onInput={(e) => onInput((e.target as HTMLInputElement).value)} {...extra} />
    </div>
  );
}

function AddDevice() {
  const [v, setV] = useState({ name: "", address: "", port: "161", pool: "" });
  const [folder, setFolder] = useState<string | null>(null);
  const [cred, setCred] = useState<string | null>(null);
  const [probe, setProbe] = useState<Probe | null>(null);
  const [testing, setTesting] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ id: string; name: string } | null>(null);
  const set = (k: keyof typeof v) => (x: string) => setV((s) => ({ ...s, [k]: x }));
  const test = async () => {
    setError(null);
    setProbe(null);
    setTesting(true);
    try {
      if (!cred) throw new Error("Choose a credential to test with.");
      setProbe(
        await unwrapped(
          api.POST("/api/v1/snmp/probe", { body: { address: v.address.trim(), port: Number(v.port) || 161, credential_id: cred, timeout_ms: 2000 } }),
        ),
      );
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setTesting(false);
    }
  };
  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setCreated(null);
    try {
      const name = v.name.trim() || probe?.sys_name || v.address.trim();
      const res = await unwrapped(
        api.POST("/api/v1/nodes", {
          body: {
            name,
            address: v.address.trim(),
            snmp_port: Number(v.port) || 161,
            group_id: folder,
            pool: v.pool.trim() || null,
            credential_id: cred,
            ...(probe?.profile_id ? { profile_id: probe.profile_id } : {}),
          },
        }),
      );
      setCreated({ id: (res as { id: string }).id, name });
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <Section title="Add device">
      <form class="form" onSubmit={add} aria-label="Add device">
        {field("ad-address", "Address *", v.address, set("address"), { required: true, placeholder: "192.0.2.10" })}
        {field("ad-name", "Name", v.name, set("name"), { placeholder: "the agent's sysName when empty" })}
        {field("ad-port", "SNMP port", v.port, set("port"), { inputMode: "numeric" })}
        <div class="field">
          <label for="ad-folder">Folder</label>
          <Picker id="ad-folder" kind="folder" label="Folder" value={folder} onChange={(id) => setFolder(id)} />
        </div>
        {field("ad-pool", "Pool", v.pool, set("pool"), { placeholder: "inherit from the folder" })}
        {allScope() ? (
          <div class="field">
            <label for="ad-cred">Credential</label>
            <Picker id="ad-cred" kind="credential" label="Credential" value={cred} onChange={(id) => setCred(id)} />
          </div>
        ) : null}
        {probe ? <ProbeResult probe={probe} /> : null}
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          {allScope() ? (
            <button type="button" onClick={() => void test()} disabled={testing || !v.address.trim()}>
              {testing ? "Testing…" : "Test SNMP"}
            </button>
          ) : null}
          <button type="submit">Add device</button>
          {created ? (
            <span class="ok" role="status">
              Added <a href={`#/node/${created.id}`}>{created.name}</a>.
            </span>
          ) : null}
        </div>
      </form>
    </Section>
  );
}

function ProbeResult({ probe }: { probe: Probe }) {
  const what = { ok: "answered", timeout: "did not answer (timeout)", auth: "refused the credentials", error: "answered with an error" }[probe.outcome];
  return (
    <div class={`probe probe-${probe.outcome}`} data-testid="probe-result" role="status">
      <p>
        <strong>The agent {what}</strong> <span class="muted">in {probe.elapsed_ms} ms</span>
      </p>
      {probe.answered ? (
        <dl class="facts">
          <dt>sysName</dt>
          <dd data-testid="probe-sysname">{probe.sys_name ?? "–"}</dd>
          <dt>sysDescr</dt>
          <dd>{probe.sys_descr ?? "–"}</dd>
          <dt>sysObjectID</dt>
          <dd>{probe.sys_object_id ?? "–"}</dd>
          <dt>Profile</dt>
          <dd data-testid="probe-profile">{probe.profile_name ?? "none (no classification rule matches)"}</dd>
          {probe.vendor || probe.model ? (
            <>
              <dt>Vendor / model</dt>
              <dd>{[probe.vendor, probe.model].filter(Boolean).join(" ")}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
    </div>
  );
}

// ---- credentials ------------------------------------------------------------------------------------------------

const V3_LEVELS = ["authPriv", "authNoPriv", "noAuthNoPriv"];
const AUTH = ["SHA", "SHA256", "SHA512", "SHA224", "SHA384", "MD5"];
const PRIV = ["AES", "AES256", "AES192", "DES"];

type CredValues = Record<string, string>;

/** A credential body: the non-secret fields, and each secret only when typed (empty = keep the stored one). */
function credentialBody(name: string, kind: string, v: CredValues): Schemas["CredentialBody"] {
  const body: Record<string, string> = { name: name.trim(), kind };
  const keep = (k: string) => {
    if (v[k]?.trim()) body[k] = v[k];
  };
  if (kind === "snmp_v2c") keep("community");
  if (kind === "snmp_v3") {
    body.user = v.user ?? "";
    body.security_level = v.security_level || "authPriv";
    if (body.security_level !== "noAuthNoPriv") {
      body.auth_protocol = v.auth_protocol || "SHA";
      keep("auth_key");
    }
    if (body.security_level === "authPriv") {
      body.priv_protocol = v.priv_protocol || "AES";
      keep("priv_key");
    }
  }
  return body as unknown as Schemas["CredentialBody"];
}

function CredentialFields({ idp, kind, v, set, editing }: { idp: string; kind: string; v: CredValues; set: (k: string, x: string) => void; editing: boolean }) {
  const secret = (k: string, label: string) => (
    <div class="field">
      <label for={`${idp}-${k}`}>{label}</label>
      <input
        id={`${idp}-${k}`}
        type="password"
        autocomplete="new-password"
        value={v[k] ?? ""}
        placeholder={editing ? "empty = keep the stored secret" : ""}
        onInput={(e) => set(k, (e.target as HTMLInputElement).value)}
      />
    </div>
  );
  const select = (k: string, label: string, options: string[]) => (
    <div class="field">
      <label for={`${idp}-${k}`}>{label}</label>
      <select id={`${idp}-${k}`} value={v[k] || options[0]} onChange={(e) => set(k, (e.target as HTMLSelectElement).value)}>
        {options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    </div>
  );
  if (kind === "snmp_v2c") return secret("community", "Community");
  if (kind !== "snmp_v3") return <p class="muted">Secrets of this kind are managed through the API.</p>;
  const level = v.security_level || "authPriv";
  return (
    <>
      {field(`${idp}-user`, "User", v.user ?? "", (x) => set("user", x))}
      {select("security_level", "Security level", V3_LEVELS)}
      {level !== "noAuthNoPriv" ? select("auth_protocol", "Auth protocol", AUTH) : null}
      {level !== "noAuthNoPriv" ? secret("auth_key", "Auth passphrase") : null}
      {level === "authPriv" ? select("priv_protocol", "Privacy protocol", PRIV) : null}
      {level === "authPriv" ? secret("priv_key", "Privacy passphrase") : null}
    </>
  );
}

function Credentials() {
  const list = useLoad(() => unwrapped(api.GET("/api/v1/credentials", { params: { query: { limit: 200 } } })), []);
  const [name, setName] = useState("");
  const [kind, setKind] = useState("snmp_v2c");
  const [v, setV] = useState<CredValues>({});
  const [error, setError] = useState<string | null>(null);
  const [ok, setOk] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setOk(false);
    try {
      await unwrapped(api.POST("/api/v1/credentials", { body: credentialBody(name, kind, v) }));
      setName("");
      setV({});
      setOk(true);
      list.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <Section title="Credentials">
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table data-testid="credentials">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Settings</th>
              <th scope="col">Secret</th>
              <th scope="col">Changed</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {((list.data ?? []) as Credential[]).map((c) => (
              <Fragment key={c.id}>
                <tr data-credential={c.id}>
                  <td>{c.name}</td>
                  <td>{c.kind}</td>
                  <td class="muted">
                    {Object.entries(c.settings as Record<string, unknown>)
                      .map(([k, x]) => `${k}: ${String(x)}`)
                      .join(", ") || "–"}
                  </td>
                  <td>{c.has_secret ? "stored (write-only)" : "none"}</td>
                  <td>{fmtTime(c.updated_at)}</td>
                  <td>
                    <button
                      type="button"
                      class="small"
                      aria-expanded={editing === c.id}
                      aria-label={editing === c.id ? `Close ${c.name}` : `Edit or rotate ${c.name}`}
                      onClick={() => setEditing(editing === c.id ? null : c.id)}
                    >
                      {editing === c.id ? "Close" : "Edit / rotate"}
                    </button>
                  </td>
                </tr>
                {editing === c.id ? (
                  <tr>
                    <td colSpan={6}>
                      <CredentialEditor
                        credential={c}
                        onSaved={() => {
                          list.reload();
                        }}
                      />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      <form class="form" onSubmit={create} aria-label="New credential">
        <h3>New credential</h3>
        {field("cr-name", "Credential name", name, setName, { required: true })}
        <div class="field">
          <label for="cr-kind">Kind</label>
          <select id="cr-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
            <option value="snmp_v2c">SNMP v2c</option>
            <option value="snmp_v3">SNMP v3</option>
          </select>
        </div>
        <CredentialFields idp="cr" kind={kind} v={v} set={(k, x) => setV((s) => ({ ...s, [k]: x }))} editing={false} />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit">Create credential</button>
          {ok ? (
            <span class="ok" role="status">
              Saved.
            </span>
          ) : null}
        </div>
      </form>
    </Section>
  );
}

function CredentialEditor({ credential, onSaved }: { credential: Credential; onSaved: () => void }) {
  const settings = credential.settings as Record<string, string>;
  const [name, setName] = useState(credential.name);
  // Secrets start empty and stay so: the service never answers them; empty on save keeps the stored one.
  const [v, setV] = useState<CredValues>({ ...settings });
  const [error, setError] = useState<string | null>(null);
  const [ok, setOk] = useState(false);
  const idp = `ce-${credential.id.slice(0, 8)}`;
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setOk(false);
    try {
      await unwrapped(api.PUT("/api/v1/credentials/{id}", { params: { path: { id: credential.id } }, body: credentialBody(name, credential.kind, v) }));
      setV((s) => Object.fromEntries(Object.entries(s).filter(([k]) => !["community", "auth_key", "priv_key"].includes(k))));
      setOk(true);
      onSaved();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="form" onSubmit={save} aria-label={`Edit credential ${credential.name}`}>
      {field(`${idp}-name`, "Credential name", name, setName, { required: true })}
      <CredentialFields idp={idp} kind={credential.kind} v={v} set={(k, x) => setV((s) => ({ ...s, [k]: x }))} editing={true} />
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="actions">
        <button type="submit">Save credential</button>
        {ok ? (
          <span class="ok" role="status">
            Saved.
          </span>
        ) : null}
      </div>
    </form>
  );
}

// ---- discovery --------------------------------------------------------------------------------------------------

function Discovery() {
  const [cidr, setCidr] = useState("");
  const [port, setPort] = useState("161");
  const [creds, setCreds] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [current, setCurrent] = useState<string | null>(null);
  const [progress, setProgress] = useState<SweepProgressEvent | null>(null);
  const detail = useLoad(
    () => (current ? unwrapped(api.GET("/api/v1/discovery/sweeps/{id}", { params: { path: { id: current } } })) : Promise.resolve(null)),
    [current],
  );
  const reload = useMemo(() => throttled(() => detail.reload(), 500), [current]);
  useLive(
    ["polling.sweep.progress", "polling.sweep.found"],
    (p, event) => {
      const e = p as SweepProgressEvent;
      if (e.id !== current) return;
      if (event === "polling.sweep.progress") setProgress(e);
      reload();
    },
    [current],
  );
  const final = detail.data?.status === "done" || detail.data?.status === "failed";
  // The live events drive the view; a sweep that ended before they were followed is read again until final.
  useEffect(() => {
    if (!current || final) return;
    const t = setInterval(() => detail.reload(), 2000);
    return () => clearInterval(t);
  }, [current, final]);
  const start = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const res = await unwrapped(
        api.POST("/api/v1/discovery/sweeps", { body: { cidr: cidr.trim(), credential_ids: creds, port: Number(port) || 161, timeout_ms: 1000 } }),
      );
      setProgress(null);
      setCurrent((res as { id: string }).id);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const d = detail.data;
  // Live progress while running; the stored sweep once it is final (events may arrive out of order).
  const live = final ? null : progress;
  const status = live?.status ?? d?.status;
  const probed = live?.probed ?? d?.probed ?? 0;
  const total = live?.total ?? d?.total ?? 0;
  return (
    <Section title="Discovery sweep">
      <form class="form" onSubmit={start} aria-label="Start a sweep">
        {field("sw-cidr", "Range (CIDR)", cidr, setCidr, { required: true, placeholder: "192.0.2.0/24" })}
        {field("sw-port", "UDP port", port, setPort, { inputMode: "numeric" })}
        <div class="field">
          <label for="sw-creds">Credentials to try</label>
          <MultiPicker id="sw-creds" kind="credential" label="Credentials to try" value={creds} onChange={setCreds} max={8} />
        </div>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit">Start sweep</button>
        </div>
      </form>
      {current && d ? (
        <div data-testid="sweep-progress" data-status={status}>
          <p>
            <strong>{d.cidr}</strong> {status} — {probed}/{total} probed, {live?.found ?? d.found} found
          </p>
          <ProgressBar value={probed} max={total} label={`Sweep ${d.cidr} progress`} />
          {/* Mounted once the detail itself is final, so every row starts chosen. */}
          {d.status === "done" || d.status === "failed" ? <SweepReview key={d.id} sweep={d} /> : null}
        </div>
      ) : null}
      <ErrorNote error={detail.error} />
    </Section>
  );
}

function SweepReview({ sweep }: { sweep: Schemas["SweepDetail"] }) {
  const rows = sweep.import_body.nodes;
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(rows.map((r) => r.address)));
  const [names, setNames] = useState<Record<string, string>>({});
  const [folder, setFolder] = useState<string | null>(null);
  const [result, setResult] = useState<Schemas["DiscoveryImportResult"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const profiles = useLoad(() => unwrapped(api.GET("/api/v1/profiles", { params: { query: { limit: 200 } } })), []);
  const creds = useLoad(() => unwrapped(api.GET("/api/v1/credentials", { params: { query: { limit: 200 } } })), []);
  const profileName = (id: string | null) => (id ? ((profiles.data ?? []).find((p) => p.id === id)?.name ?? "…") : "–");
  const credName = (id: string | null) => (id ? ((creds.data ?? []).find((c) => c.id === id)?.name ?? "…") : "–");
  const byAddress = new Map(sweep.results.map((r) => [r.address, r]));
  if (!rows.length) return <p class="muted">Nothing answered in this range.</p>;
  const toggle = (a: string) =>
    setChosen((s) => {
      const n = new Set(s);
      if (n.has(a)) n.delete(a);
      else n.add(a);
      return n;
    });
  const importRows = async () => {
    setError(null);
    try {
      const nodes = rows.filter((r) => chosen.has(r.address)).map((r) => ({ ...r, name: names[r.address]?.trim() || r.name }));
      setResult(await unwrapped(api.POST("/api/v1/discovery/import", { body: { nodes, ...(folder ? { group_id: folder } : {}) } })));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div class="sweep-review">
      <h3>Review</h3>
      <div class="table-wrap">
        <table data-testid="sweep-results">
          <thead>
            <tr>
              <th scope="col">Import</th>
              <th scope="col">Address</th>
              <th scope="col">Name</th>
              <th scope="col">Profile</th>
              <th scope="col">Credential</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.address} data-address={r.address}>
                <td>
                  <input type="checkbox" aria-label={`Import ${r.address}`} checked={chosen.has(r.address)} onChange={() => toggle(r.address)} />
                </td>
                <td>{r.address}</td>
                <td>
                  <input
                    aria-label={`Name for ${r.address}`}
                    value={names[r.address] ?? r.name}
                    onInput={(e) => setNames((s) => ({ ...s, [r.address]: (e.target as HTMLInputElement).value }))}
                  />
                  <br />
                  <small class="muted">{byAddress.get(r.address)?.sys_descr ?? ""}</small>
                </td>
                <td>{profileName(r.profile_id)}</td>
                <td>{credName(r.credential_id)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="field">
        <label for="sw-folder">Import into folder</label>
        <Picker id="sw-folder" kind="folder" label="Import into folder" value={folder} onChange={(id) => setFolder(id)} />
      </div>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="actions">
        <button type="button" onClick={() => void importRows()} disabled={!chosen.size}>
          Import {chosen.size} chosen
        </button>
        {result ? (
          <span class="ok" role="status" data-testid="import-result">
            Imported: {result.created} created, {result.skipped_existing} already known.
          </span>
        ) : null}
      </div>
    </div>
  );
}
