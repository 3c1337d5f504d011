/**
 * A local HTTPS server speaking a cloud-managed network platform's REST API (the shape of the Meraki Dashboard API v1),
 * on 127.0.0.1 and a free port, for the netcloud plugin's tests and benchmark.
 *
 * - Auth: `Authorization: Bearer <key>`; a key not in `keys` answers 401 `{"errors": ["Invalid API key"]}`. Each key
 *   sees the organizations it maps to.
 * - Routes (GET, under `/api/v1`): `/organizations`, `/organizations/{id}/networks`, `/organizations/{id}/devices`,
 *   `/organizations/{id}/devices/statuses`. An organization the key does not see answers 404.
 * - Pagination: `perPage` (3 to 1000, default 1000) and `startingAfter` (the last id or serial of the previous page);
 *   a page that is not the last carries `Link: <…>; rel=next` (RFC 5988), absolute on this server (or on `linkBase`).
 * - `rateLimit(n, retryAfter)`: the next n requests answer 429 with that `Retry-After`.
 * - `delayMs`: every answer waits this long before its headers (timeouts).
 * - `redirectTo`: every request answers 307 to that base + the same path and query.
 * Every request is recorded in `requests` (method, path with query, whether the Authorization header was present).
 *
 * Its certificate is self-signed for 127.0.0.1 / localhost (the `openssl` CLI, as test/support/httpTarget.ts does);
 * pass `cert` to the client as an extra CA.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedCert, type SelfSignedCert } from "./httpTarget.js";

export interface CloudNetworkDef {
  id: string;
  name: string;
}
export interface CloudDeviceDef {
  serial: string;
  name: string;
  networkId: string;
  model: string;
  lanIp: string | null;
  status: "online" | "offline" | "alerting" | "dormant";
}
export interface CloudOrgDef {
  id: string;
  name: string;
  networks: CloudNetworkDef[];
  devices: CloudDeviceDef[];
}

export interface NetcloudRequest {
  method: string;
  path: string;
  authorized: boolean;
}

export interface NetcloudServer {
  /** Base URL of the API: https://127.0.0.1:PORT/api/v1 */
  url: string;
  origin: string;
  port: number;
  cert: SelfSignedCert;
  /** key → the organization ids it sees. */
  keys: Map<string, string[]>;
  orgs: Map<string, CloudOrgDef>;
  requests: NetcloudRequest[];
  delayMs: number;
  redirectTo: string | null;
  /** Where next links point (default: this server's origin). */
  linkBase: string | null;
  rateLimit(count: number, retryAfter: string): void;
  addOrg(org: CloudOrgDef, ...keys: string[]): void;
  device(orgId: string, serial: string): CloudDeviceDef;
  stop(): Promise<void>;
}

const MAX_PER_PAGE = 1000;

function pageOf<T>(rows: T[], keyOf: (r: T) => string, index: Map<string, number> | null, query: URLSearchParams): { page: T[]; last: string | null } {
  const perPage = Math.min(MAX_PER_PAGE, Math.max(3, Number(query.get("perPage") ?? MAX_PER_PAGE) || MAX_PER_PAGE));
  const after = query.get("startingAfter");
  let start = 0;
  if (after !== null) {
    const at = index ? index.get(after) : rows.findIndex((r) => keyOf(r) === after);
    start = at === undefined || at < 0 ? rows.length : at + 1;
  }
  const page = rows.slice(start, start + perPage);
  const more = start + perPage < rows.length;
  return { page, last: more && page.length ? keyOf(page[page.length - 1]) : null };
}

export async function startNetcloudServer(options: { cert?: SelfSignedCert } = {}): Promise<NetcloudServer> {
  const cert = options.cert ?? selfSignedCert();
  let limited = 0;
  let retryAfter = "1";
  const indexes = new Map<string, Map<string, number>>();
  const serialIndex = (org: CloudOrgDef) => {
    let idx = indexes.get(org.id);
    if (!idx || idx.size !== org.devices.length) {
      idx = new Map(org.devices.map((d, i) => [d.serial, i]));
      indexes.set(org.id, idx);
    }
    return idx;
  };

  const state = {
    keys: new Map<string, string[]>(),
    orgs: new Map<string, CloudOrgDef>(),
    requests: [] as NetcloudRequest[],
    delayMs: 0,
    redirectTo: null as string | null,
    linkBase: null as string | null,
  };

  const server: Server = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://127.0.0.1");
    const auth = req.headers.authorization;
    state.requests.push({ method: req.method ?? "GET", path: url.pathname + url.search, authorized: typeof auth === "string" });
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(body === undefined ? "" : JSON.stringify(body));
      };
      if (state.delayMs > 0) setTimeout(send, state.delayMs);
      else send();
    };
    if (state.redirectTo) return answer(307, undefined, { location: `${state.redirectTo}${url.pathname.replace(/^\/api\/v1/, "")}${url.search}` });
    if (limited > 0) {
      limited--;
      return answer(429, { errors: ["API rate limit exceeded for organization"] }, { "retry-after": retryAfter });
    }
    const key = typeof auth === "string" && auth.startsWith("Bearer ") ? auth.slice(7) : null;
    const visible = key !== null ? state.keys.get(key) : undefined;
    if (!visible) return answer(401, { errors: ["Invalid API key"] });
    if (req.method !== "GET") return answer(405, { errors: ["Method not allowed"] });

    const origin = state.linkBase ?? `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const link = (last: string | null): Record<string, string> => {
      if (last === null) return {};
      const next = new URL(`${origin}${url.pathname}`);
      for (const [k, v] of url.searchParams) if (k !== "startingAfter") next.searchParams.set(k, v);
      next.searchParams.set("startingAfter", last);
      const first = new URL(`${origin}${url.pathname}`);
      return { link: `<${first.href}>; rel=first, <${next.href}>; rel=next` };
    };

    if (url.pathname === "/api/v1/organizations") {
      return answer(
        200,
        visible.flatMap((id) => {
          const o = state.orgs.get(id);
          return o ? [{ id: o.id, name: o.name, url: `https://cloud.example/o/${o.id}`, api: { enabled: true } }] : [];
        }),
      );
    }
    const m = /^\/api\/v1\/organizations\/([^/]+)\/(networks|devices|devices\/statuses)$/.exec(url.pathname);
    const org = m ? state.orgs.get(decodeURIComponent(m[1])) : undefined;
    if (!m || !org || !visible.includes(org.id)) return answer(404, { errors: ["Not found"] });
    if (m[2] === "networks") {
      const { page, last } = pageOf(org.networks, (n) => n.id, null, url.searchParams);
      return answer(
        200,
        page.map((n) => ({ id: n.id, organizationId: org.id, name: n.name, productTypes: ["switch"], timeZone: "UTC", tags: [] })),
        link(last),
      );
    }
    const { page, last } = pageOf(org.devices, (d) => d.serial, serialIndex(org), url.searchParams);
    if (m[2] === "devices") {
      return answer(
        200,
        page.map((d) => ({
          serial: d.serial,
          name: d.name,
          networkId: d.networkId,
          model: d.model,
          mac: "00:18:0a:00:00:01",
          lanIp: d.lanIp,
          productType: "switch",
          firmware: "switch-16-7",
          tags: [],
        })),
        link(last),
      );
    }
    return answer(
      200,
      page.map((d) => ({
        serial: d.serial,
        name: d.name,
        networkId: d.networkId,
        status: d.status,
        lanIp: d.lanIp,
        publicIp: "203.0.113.1",
        lastReportedAt: new Date().toISOString(),
        productType: "switch",
        model: d.model,
      })),
      link(last),
    );
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `https://127.0.0.1:${port}`;
  return Object.assign(state, {
    url: `${origin}/api/v1`,
    origin,
    port,
    cert,
    rateLimit(count: number, after: string) {
      limited = count;
      retryAfter = after;
    },
    addOrg(org: CloudOrgDef, ...keys: string[]) {
      state.orgs.set(org.id, org);
      for (const k of keys) state.keys.set(k, [...(state.keys.get(k) ?? []), org.id]);
    },
    device(orgId: string, serial: string): CloudDeviceDef {
      const d = state.orgs.get(orgId)?.devices.find((x) => x.serial === serial);
      if (!d) throw new Error(`no device ${serial} in ${orgId}`);
      return d;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
