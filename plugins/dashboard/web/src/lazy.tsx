// Views loaded on first visit (their own chunk), so the first page load stays small.
import type { ComponentType, FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";

/** A component that loads `load()` (a dynamic import) once, showing "Loading…" until then. */
export function lazyView<P extends object>(load: () => Promise<ComponentType<P>>): FunctionComponent<P> {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  return function Lazy(props: P) {
    const [view, setView] = useState<ComponentType<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (view) return;
      pending ??= load();
      pending.then(
        (c) => {
          loaded = c;
          setView(() => c);
        },
        () => {
          pending = null;
          setFailed(true);
        },
      );
    }, []);
    if (failed)
      return (
        <p class="error" role="alert">
          This view could not be loaded; reload the page.
        </p>
      );
    const View = view;
    return View ? <View {...props} /> : <p class="muted">Loading…</p>;
  };
}
