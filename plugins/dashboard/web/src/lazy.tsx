// Views loaded on first use (vite splits each dynamic import into its own chunk): the charting views bring uPlot, which
// the first page load does not need.
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";

/** A component that renders `pick(await load())` once its module has loaded (a "Loading…" line until then). */
export function lazy<P extends object, M>(load: () => Promise<M>, pick: (m: M) => ComponentType<P>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function Lazy(props: P) {
    const [C, setC] = useState<ComponentType<P> | null>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (C) return;
      load().then(
        (m) => {
          loaded = pick(m);
          setC(() => loaded);
        },
        () => setFailed(true),
      );
    }, []);
    if (failed)
      return (
        <p class="error" role="alert">
          This view could not be loaded (a newer version may be deployed): reload the page.
        </p>
      );
    return C ? <C {...props} /> : <p class="muted">Loading…</p>;
  };
}

export const LazyNodeGraphs = lazy(
  () => import("./views/NodeGraphs.tsx"),
  (m) => m.NodeGraphs,
);
export const LazyTimeChart = lazy(
  () => import("./charts.tsx"),
  (m) => m.TimeChart,
);
export const LazyReports = lazy(
  () => import("./views/Reports.tsx"),
  (m) => m.ReportsView,
);

/** The node graphs' route for an alert (one click from its row): its metric and interface, from an hour before it fired. */
export function graphHref(node: string, metric?: string | null, ifindex?: number | null, firedAt?: string | number | null): string {
  const q = new URLSearchParams();
  if (metric) q.set("metric", metric);
  if (ifindex !== null && ifindex !== undefined) q.set("ifindex", String(ifindex));
  const fired = firedAt === null || firedAt === undefined ? NaN : new Date(firedAt).getTime();
  if (Number.isFinite(fired)) q.set("from", String(Math.floor(fired / 1000) - 3600));
  const qs = q.toString();
  return `#/node/${node}/graphs${qs ? `?${qs}` : ""}`;
}
