import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./styles.css";
import { can, login, logout, probe, useSession } from "./session.tsx";
import { Accounts, AlertsConsole, MutesMaintenance } from "./consoleLazy.tsx";
import { Events } from "./views/Events.tsx";
import { Flows, Pollers, Sweeps, TopN } from "./views/Fleet.tsx";
import { Folders } from "./views/Folders.tsx";
import { lazy, LazyNodeGraphs, LazyReports } from "./lazy.tsx";
import { NodeView } from "./views/Node.tsx";
import { Overview } from "./views/Overview.tsx";
import { SearchBox, SearchPage } from "./views/Search.tsx";

// The settings screens (and their forms) load on first visit, in their own chunks.
const SettingsView = lazy(
  () => import("./views/Settings.tsx"),
  (m) => m.SettingsPage,
);
const Destinations = lazy(
  () => import("./views/Forwarding.tsx"),
  (m) => m.Destinations,
);
const Schedules = lazy(
  () => import("./views/Schedules.tsx"),
  (m) => m.Schedules,
);
// The inventory's pages are their own chunks, loaded on first visit.
const Inventory = lazy(
  () => import("./views/Inventory.tsx"),
  (m) => m.Inventory,
);
const FolderPage = lazy(
  () => import("./views/FolderPage.tsx"),
  (m) => m.FolderPage,
);

const NAV: [string, string][] = [
  ["overview", "Overview"],
  ["folders", "Folders"],
  ["map", "Map"],
  ["top", "Top interfaces"],
  ["events", "Events"],
  ["flows", "Flows"],
  ["reports", "Reports"],
  ["pollers", "Pollers"],
  ["sweeps", "Sweeps"],
  ["inventory", "Inventory"],
  ["settings/thresholds", "Thresholds"],
  ["settings/channels", "Channels"],
  ["settings/routing", "Routing"],
  ["settings/event-rules", "Event rules"],
  ["alerts", "Alerts"],
  ["maintenance", "Mutes & maintenance"],
  ["accounts", "Accounts"],
  ["settings/destinations", "Forwarding"],
  ["settings/schedules", "Schedules"],
];
// The topology map brings d3-force: loaded on first use.
const LazyTopologyMap = lazy(
  () => import("./views/TopologyMap.tsx"),
  (m) => m.TopologyMap,
);

/** Screens only an admin (ManageSystem) opens. */
const ADMIN_NAV = new Set(["accounts"]);
/** What an anonymous visitor of a public dashboard may open (the reads the mode opens). */
const PUBLIC_NAV = new Set(["overview", "top"]);

function useHash(): string {
  const [hash, setHash] = useState(location.hash.replace(/^#\/?/, ""));
  useEffect(() => {
    const on = () => setHash(location.hash.replace(/^#\/?/, ""));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

function Login({ onCancel }: { onCancel?: () => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(username, password);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <form onSubmit={submit} aria-labelledby="login-title" class="card">
        <h1 id="login-title">Sign in</h1>
        <div class="field">
          <label for="username">Username</label>
          <input
            id="username"
            name="username"
            autocomplete="username"
            value={username}
            onInput={(e) => setUsername((e.target as HTMLInputElement).value)}
            required
          />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
            required
          />
        </div>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          {onCancel ? (
            <button type="button" class="link" onClick={onCancel}>
              Back to the public dashboard
            </button>
          ) : null}
        </div>
      </form>
    </main>
  );
}

function View({ route }: { route: string }) {
  const [name, arg] = [route.split("/")[0], route.split("/").slice(1).join("/")];
  // The node graphs (#/node/<id>/graphs?metric=…&from=…): loaded on first use, with uPlot.
  if (name === "node" && /^[^/?]+\/graphs(\?|$)/.test(arg)) return <LazyNodeGraphs id={arg.split("/")[0]} query={arg.split("?")[1] ?? ""} />;

  // Settings pages of the operator console's "settings" part (destinations, report and analysis schedules).
  if (name === "settings" && arg === "destinations") return <Destinations />;
  if (name === "settings" && arg === "schedules") return <Schedules />;
  switch (name) {
    case "map":
      return <LazyTopologyMap />;
    case "reports":
      return <LazyReports tab={arg} />;
    case "node":
      return <NodeView id={arg} />;
    case "folders":
      return <Folders />;
    case "top":
      return <TopN />;
    case "events":
      return <Events />;
    case "flows":
      return <Flows />;
    case "pollers":
      return <Pollers />;
    case "sweeps":
      return <Sweeps />;
    case "inventory":
      return <Inventory />;
    case "folder":
      return <FolderPage id={arg} />;
    case "search":
      return <SearchPage q={arg} />;

    case "alerts":
      return <AlertsConsole />;
    case "maintenance":
      return <MutesMaintenance />;
    case "accounts":
      return <Accounts />;
    case "settings":
      return <SettingsView tab={arg} />;
    default:
      return <Overview />;
  }
}

function App() {
  const session = useSession();
  const route = useHash() || "overview";
  const [ready, setReady] = useState(false);
  const [wantLogin, setWantLogin] = useState(false);
  const [menu, setMenu] = useState(false);
  useEffect(() => {
    probe().finally(() => setReady(true));
  }, []);
  useEffect(() => setMenu(false), [route]);
  if (!ready) return <p class="muted">Loading…</p>;
  if (!session.signedIn && (!session.publicMode || wantLogin)) return <Login onCancel={session.publicMode ? () => setWantLogin(false) : undefined} />;
  const anonymous = !session.signedIn;
  const nav = NAV.filter(([r]) => !anonymous || PUBLIC_NAV.has(r));
  for (let i = nav.length - 1; i >= 0; i--) if (ADMIN_NAV.has(nav[i][0]) && !can("ManageSystem")) nav.splice(i, 1);
  const current = anonymous && !PUBLIC_NAV.has(route.split("/")[0]) ? "overview" : route;
  return (
    <>
      <a
        class="skip"
        href="#content"
        onClick={(e) => {
          // Routes live in the hash: move focus without touching it.
          e.preventDefault();
          document.getElementById("content")?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">nms</strong>
        <button type="button" class="menu-toggle" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
          Menu
        </button>
        <nav id="nav" class={menu ? "open" : ""} aria-label="Views">
          {nav.map(([r, label]) => (
            <a key={r} href={`#/${r}`} aria-current={current === r || (r === "overview" && current === "") ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        {anonymous ? null : <SearchBox />}
        <span class="who">
          {anonymous ? (
            <>
              <span class="muted">public view</span>{" "}
              <button type="button" class="small" onClick={() => setWantLogin(true)}>
                Sign in
              </button>
            </>
          ) : (
            <>
              <span data-testid="whoami">
                {session.identity?.username} ({session.identity?.role})
              </span>{" "}
              <button type="button" class="small" onClick={() => void logout()}>
                Sign out
              </button>
            </>
          )}
        </span>
      </header>
      <main id="content" tabIndex={-1}>
        <View route={current} />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
