// One search box for the top bar: nodes (name, address), folders (name), interfaces (name, description); results
// grouped, each a link. The same results as a page at #/search/<text>.
import { useEffect, useRef, useState } from "preact/hooks";
import type { Schemas } from "../../../../../clients/typescript/src/index.ts";
import { api, unwrapped } from "../session.tsx";
import { Section } from "../ui.tsx";

const PER_GROUP = 8;

export interface SearchResults {
  nodes: Schemas["NodeView"][];
  folders: Schemas["FolderView"][];
  interfaces: Schemas["InterfaceSearchHit"][];
}

const looksLikeAddress = (q: string) => /^[0-9a-f:.]+$/i.test(q) && /[.:]/.test(q) && /\d/.test(q);

/** Every group at once; a group that fails (a role that may not read it) is empty. */
export async function searchAll(text: string): Promise<SearchResults> {
  const q = text.trim();
  const quiet = <T,>(p: Promise<T[]>) => p.catch(() => [] as T[]);
  const [byName, byAddress, folders, interfaces] = await Promise.all([
    quiet(unwrapped(api.GET("/api/v1/nodes", { params: { query: { q, limit: PER_GROUP } } }))),
    looksLikeAddress(q) ? quiet(unwrapped(api.GET("/api/v1/nodes", { params: { query: { address: q, limit: PER_GROUP } } }))) : Promise.resolve([]),
    quiet(unwrapped(api.GET("/api/v1/node-groups", { params: { query: { q, limit: PER_GROUP } } }))),
    quiet(unwrapped(api.GET("/api/v1/interfaces", { params: { query: { q, limit: PER_GROUP } } }))),
  ]);
  const seen = new Set<string>();
  const nodes = [...byAddress, ...byName].filter((n) => !seen.has(n.id) && seen.add(n.id));
  return { nodes, folders, interfaces };
}

function ResultGroups({ r, onPick }: { r: SearchResults; onPick?: () => void }) {
  const empty = !r.nodes.length && !r.folders.length && !r.interfaces.length;
  if (empty) return <p class="muted">Nothing found.</p>;
  return (
    <div class="search-groups">
      {r.nodes.length ? (
        <section aria-label="Nodes found">
          <h3>Nodes</h3>
          <ul>
            {r.nodes.map((n) => (
              <li key={n.id}>
                <a href={`#/node/${n.id}`} onClick={onPick}>
                  {n.name}
                </a>{" "}
                <span class="muted">{n.address}</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {r.folders.length ? (
        <section aria-label="Folders found">
          <h3>Folders</h3>
          <ul>
            {r.folders.map((f) => (
              <li key={f.id}>
                <a href={`#/folder/${f.id}`} onClick={onPick}>
                  {f.name}
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {r.interfaces.length ? (
        <section aria-label="Interfaces found">
          <h3>Interfaces</h3>
          <ul>
            {r.interfaces.map((i) => (
              <li key={`${i.node_id}:${i.ifindex}`}>
                <a href={`#/node/${i.node_id}`} onClick={onPick}>
                  {i.node_name} {i.if_name ?? `#${i.ifindex}`}
                </a>{" "}
                <span class="muted">{i.if_alias ?? ""}</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}

/** The top bar's box: results under it while typing; Enter opens the results page. */
export function SearchBox() {
  const [text, setText] = useState("");
  const [open, setOpen] = useState(false);
  const [results, setResults] = useState<SearchResults | null>(null);
  const seq = useRef(0);
  useEffect(() => {
    const q = text.trim();
    if (!q) {
      setResults(null);
      return;
    }
    const mine = ++seq.current;
    // One request per group after a short pause, not one per key.
    const timer = setTimeout(() => void searchAll(q).then((r) => mine === seq.current && setResults(r)), 200);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) location.hash = `#/search/${encodeURIComponent(text.trim())}`;
        setOpen(false);
      }}
    >
      <input
        type="search"
        aria-label="Search nodes, addresses, interfaces, folders"
        placeholder="Search…"
        value={text}
        onFocus={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 200)}
        onInput={(e) => {
          setText((e.target as HTMLInputElement).value);
          setOpen(true);
        }}
        onKeyDown={(e) => e.key === "Escape" && setOpen(false)}
      />
      {open && results ? (
        <div class="search-panel" role="region" aria-label="Search results">
          <ResultGroups r={results} onPick={() => setOpen(false)} />
        </div>
      ) : null}
    </form>
  );
}

export function SearchPage({ q }: { q: string }) {
  const text = decodeURIComponent(q);
  const [results, setResults] = useState<SearchResults | null>(null);
  useEffect(() => {
    let gone = false;
    void searchAll(text).then((r) => !gone && setResults(r));
    return () => {
      gone = true;
    };
  }, [text]);
  return (
    <Section title={`Search: ${text}`}>
      <div data-testid="search-page">{results ? <ResultGroups r={results} /> : <p class="muted">Searching…</p>}</div>
    </Section>
  );
}
