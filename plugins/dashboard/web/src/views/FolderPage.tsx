// One folder: its settings (rename, move under another folder, pool; delete), its sub-folders and nodes with their health.
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { AgentMark, useAgentHealth } from "../inventory.tsx";
import { Picker } from "../pickers.tsx";
import { api, can, unwrapped, useLive, useLoad } from "../session.tsx";
import { ErrorNote, Section } from "../ui.tsx";

type Folder = Schemas["FolderView"];

/** The full FolderWrite of a folder as stored (PUT /node-groups/{id} replaces the whole document). */
function folderWriteOf(f: Folder): Schemas["FolderWrite"] {
  return {
    name: f.name,
    parent_id: f.parent_id,
    group_type: f.group_type,
    pool: f.pool,
    latitude: f.latitude,
    longitude: f.longitude,
    sort_order: f.sort_order,
    tags: f.tags,
    tags_excluded: f.tags_excluded,
    ip_ranges: f.ip_ranges,
  };
}

export function FolderPage({ id }: { id: string }) {
  const folder = useLoad(() => unwrapped(api.GET("/api/v1/node-groups/{id}", { params: { path: { id } } })), [id]);
  const nodes = useLoad(() => unwrapped(api.GET("/api/v1/nodes", { params: { query: { group_id: id, limit: 1000 } } })), [id]);
  const children = useLoad(() => unwrapped(api.GET("/api/v1/node-groups", { params: { query: { parent_id: id, limit: 200 } } })), [id]);
  const parent = useLoad(
    () =>
      folder.data?.parent_id ? unwrapped(api.GET("/api/v1/node-groups/{id}", { params: { path: { id: folder.data.parent_id } } })) : Promise.resolve(null),
    [folder.data?.parent_id],
  );
  const health = useAgentHealth();
  useLive(["inventory.node.created", "inventory.node.deleted", "inventory.node.updated", "inventory.folder.updated"], () => {
    nodes.reload();
    folder.reload();
  });
  const f = folder.data;
  const direct = (nodes.data ?? []).filter((n) => n.group_id === id);
  return (
    <div class="grid">
      <Section title={f ? `Folder ${f.name}` : "Folder"}>
        <ErrorNote error={folder.error} />
        {f ? (
          <>
            <dl class="facts">
              <dt>Parent</dt>
              <dd>{f.parent_id ? <a href={`#/folder/${f.parent_id}`}>{parent.data?.name ?? "…"}</a> : "(tree root)"}</dd>
              <dt>Pool</dt>
              <dd data-testid="folder-pool">
                {f.effective_pool}
                {f.pool ? "" : <span class="muted"> (inherited)</span>}
              </dd>
              <dt>Tags</dt>
              <dd>{f.effective_tags.join(", ") || "–"}</dd>
              <dt>IP ranges</dt>
              <dd>{f.ip_ranges.join(", ") || "–"}</dd>
            </dl>
            <FolderEditor folder={f} onSaved={folder.reload} />
          </>
        ) : null}
      </Section>
      <Section title="Sub-folders">
        <ErrorNote error={children.error} />
        <ul class="rows">
          {(children.data ?? [])
            .filter((c) => c.parent_id === id)
            .map((c) => (
              <li key={c.id}>
                <a href={`#/folder/${c.id}`}>{c.name}</a>
              </li>
            ))}
          {children.data && !children.data.filter((c) => c.parent_id === id).length ? <li class="muted">None.</li> : null}
        </ul>
      </Section>
      <Section title="Nodes">
        <ErrorNote error={nodes.error} />
        <ul class="rows" data-testid="folder-nodes">
          {direct.map((n) => (
            <li key={n.id} data-node={n.id}>
              <a href={`#/node/${n.id}`}>{n.name}</a> <span class="muted">{n.address}</span> <AgentMark health={health.get(n.id)} />
            </li>
          ))}
          {nodes.data && !direct.length ? <li class="muted">No node filed directly here.</li> : null}
        </ul>
      </Section>
    </div>
  );
}

function FolderEditor({ folder, onSaved }: { folder: Folder; onSaved: () => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(folder.name);
  const [pool, setPool] = useState(folder.pool ?? "");
  const [parent, setParent] = useState<string | null>(folder.parent_id);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirm, setConfirm] = useState(false);
  useEffect(() => {
    setName(folder.name);
    setPool(folder.pool ?? "");
    setParent(folder.parent_id);
  }, [folder.id, folder.updated_at]);
  if (!can("ManageConfig")) return null;
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      await unwrapped(
        api.PUT("/api/v1/node-groups/{id}", {
          params: { path: { id: folder.id } },
          body: { ...folderWriteOf(folder), name: name.trim(), pool: pool.trim() || null, parent_id: parent },
        }),
      );
      setSaved(true);
      onSaved();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await unwrapped(api.DELETE("/api/v1/node-groups/{id}", { params: { path: { id: folder.id } } }));
      location.hash = "#/folders";
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div class="editor">
      <div class="actions">
        <button type="button" class="small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Close editor" : "Edit folder"}
        </button>
        {confirm ? (
          <>
            <button type="button" class="small danger" onClick={() => void remove()}>
              Really delete {folder.name}
            </button>
            <button type="button" class="small" onClick={() => setConfirm(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" class="small danger" onClick={() => setConfirm(true)}>
            Delete folder
          </button>
        )}
      </div>
      {open ? (
        <form class="form" onSubmit={save} aria-label="Edit folder" data-testid="folder-editor">
          <div class="field">
            <label for="fe-name">Folder name</label>
            <input id="fe-name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required />
          </div>
          <div class="field">
            <label for="fe-parent">Parent folder</label>
            <Picker id="fe-parent" kind="folder" label="Parent folder" value={parent} onChange={(id) => setParent(id)} />
            <small class="muted">Empty = the tree root.</small>
          </div>
          <div class="field">
            <label for="fe-pool">Folder pool</label>
            <input id="fe-pool" value={pool} placeholder="inherit" onInput={(e) => setPool((e.target as HTMLInputElement).value)} />
          </div>
          {error ? (
            <p class="error" role="alert">
              {error}
            </p>
          ) : null}
          <div class="actions">
            <button type="submit">Save folder</button>
            {saved ? (
              <span class="ok" role="status">
                Saved.
              </span>
            ) : null}
          </div>
        </form>
      ) : error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
