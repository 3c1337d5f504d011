// The alert console, mutes and maintenance, accounts, and the node view's "Mute / Maintenance" card, loaded on first
// use (their own chunks) so the first page load does not grow with screens most visits never open.
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";

function lazyView<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function Lazy(props: P) {
    const [View, setView] = useState<ComponentType<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (View) return;
      let gone = false;
      load().then(
        (c) => {
          loaded = c;
          if (!gone) setView(() => c);
        },
        () => !gone && setFailed(true),
      );
      return () => {
        gone = true;
      };
    }, []);
    if (failed) {
      return (
        <p class="error" role="alert">
          This screen could not be loaded; reload the page.
        </p>
      );
    }
    return View ? <View {...props} /> : <p class="muted">Loading…</p>;
  };
}

export const AlertsConsole = lazyView(() => import("./views/Alerts.tsx").then((m) => m.AlertsConsole));
export const MutesMaintenance = lazyView(() => import("./views/Alerts.tsx").then((m) => m.MutesMaintenance));
export const Accounts = lazyView(() => import("./views/Accounts.tsx").then((m) => m.Accounts));
export const NodeAlertActions = lazyView<{ id: string }>(() => import("./alertActions.tsx").then((m) => m.NodeAlertActions));
