/**
 * Every mounted route as (method, path pattern), built once at boot. Used to
 * answer 405 with an Allow header when a path exists under other methods.
 */
class RouteTable {
  private routes: { method: string; pattern: RegExp }[] = [];

  reset(entries: { method: string; path: string }[]): void {
    this.routes = entries.map(({ method, path }) => ({ method: method.toUpperCase(), pattern: toPattern(path) }));
  }

  methodsFor(path: string): string[] {
    const clean = path.length > 1 ? path.replace(/\/+$/, "") : path;
    const set = new Set(this.routes.filter((r) => r.pattern.test(clean)).map((r) => r.method));
    if (set.has("GET")) set.add("HEAD");
    return [...set].filter((m) => m !== "ALL" && m !== "USE").sort();
  }
}

function toPattern(path: string): RegExp {
  const body = path
    .replace(/\/+$/, "")
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body || "/"}$`);
}

export const routeTable = new RouteTable();
