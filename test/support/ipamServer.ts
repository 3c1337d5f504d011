/**
 * A local HTTPS IPAM server speaking a NetBox-like REST API, on 127.0.0.1 and a free port, for the ipam plugin's tests.
 *
 *   GET /api/dcim/sites/?limit=&offset=      {count, next, previous, results: [{id, name, slug}]}
 *   GET /api/ipam/prefixes/?limit=&offset=   {count, next, previous, results: [{id, prefix, site: {id, name, slug} | null, custom_fields}]}
 *
 * `next` and `previous` are absolute links (https://127.0.0.1:<port>/…), as NetBox answers them. Every request needs
 * `Authorization: Token <token>`, else 401 {"detail": "Invalid token."}. Knobs for failure tests: `delayMs` (answer
 * late), `redirectTo` (answer 302 to that URL instead), `nextOrigin` (write next links on another origin),
 * `maxLimit` (the server's own page cap, as NetBox's MAX_PAGE_SIZE). Every request is recorded (path and the
 * Authorization header it carried). The certificate is self-signed (openssl), for 127.0.0.1 and localhost.
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { selfSignedCert, type SelfSignedCert } from "./httpTarget.js";

export interface IpamSiteFixture {
  id: number;
  name: string;
  slug?: string;
}

export interface IpamPrefixFixture {
  id: number;
  prefix: string;
  /** The site's id (null: none). */
  site?: number | null;
  custom_fields?: Record<string, unknown>;
}

export interface IpamServerOptions {
  token: string;
  sites?: IpamSiteFixture[];
  prefixes?: IpamPrefixFixture[];
  cert?: SelfSignedCert;
}

export interface IpamRequest {
  path: string;
  authorization: string | undefined;
}

export interface IpamTestServer {
  /** https://127.0.0.1:<port> (no trailing slash) */
  url: string;
  port: number;
  cert: SelfSignedCert;
  token: string;
  sites: IpamSiteFixture[];
  prefixes: IpamPrefixFixture[];
  requests: IpamRequest[];
  delayMs: number;
  redirectTo: string | null;
  nextOrigin: string | null;
  maxLimit: number;
  close(): Promise<void>;
}

export async function startIpamServer(options: IpamServerOptions): Promise<IpamTestServer> {
  const cert = options.cert ?? selfSignedCert();
  const sockets = new Set<import("node:stream").Duplex>();
  const state: IpamTestServer = {
    url: "",
    port: 0,
    cert,
    token: options.token,
    sites: options.sites ?? [],
    prefixes: options.prefixes ?? [],
    requests: [],
    delayMs: 0,
    redirectTo: null,
    nextOrigin: null,
    maxLimit: 1000,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  const list = (url: URL, path: string, items: unknown[]) => {
    const limit = Math.max(1, Math.min(state.maxLimit, Number(url.searchParams.get("limit") ?? 50) || 50));
    const offset = Math.max(0, Number(url.searchParams.get("offset") ?? 0) || 0);
    const link = (o: number) => `${state.nextOrigin ?? state.url}${path}?limit=${limit}&offset=${o}`;
    return {
      count: items.length,
      next: offset + limit < items.length ? link(offset + limit) : null,
      previous: offset > 0 ? link(Math.max(0, offset - limit)) : null,
      results: items.slice(offset, offset + limit),
    };
  };

  const siteRef = (id: number | null | undefined) => {
    if (id === null || id === undefined) return null;
    const s = state.sites.find((x) => x.id === id);
    return { id, name: s?.name ?? `site ${id}`, slug: s?.slug ?? `site-${id}` };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", state.url);
    state.requests.push({ path: url.pathname + url.search, authorization: req.headers.authorization });
    if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
    if (state.redirectTo) {
      res.writeHead(302, { location: state.redirectTo });
      return void res.end();
    }
    if (req.headers.authorization !== `Token ${state.token}`) return send(res, 401, { detail: "Invalid token." });
    if (req.method !== "GET") return send(res, 405, { detail: "Method not allowed." });
    if (url.pathname === "/api/dcim/sites/") {
      return send(
        res,
        200,
        list(
          url,
          url.pathname,
          state.sites.map((s) => ({ id: s.id, name: s.name, slug: s.slug ?? `site-${s.id}` })),
        ),
      );
    }
    if (url.pathname === "/api/ipam/prefixes/") {
      return send(
        res,
        200,
        list(
          url,
          url.pathname,
          state.prefixes.map((p) => ({ id: p.id, prefix: p.prefix, site: siteRef(p.site), custom_fields: p.custom_fields ?? {} })),
        ),
      );
    }
    return send(res, 404, { detail: "Not found." });
  };

  const server: Server = createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    handle(req, res).catch(() => send(res, 500, { detail: "test server error" }));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `https://127.0.0.1:${state.port}`;
  return state;
}
