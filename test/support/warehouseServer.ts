/**
 * A local stand-in for a cloud data warehouse's streaming-insert API (BigQuery's documented protocol), over HTTPS on
 * 127.0.0.1 with a self-signed certificate:
 *  - `POST /token`: the OAuth 2.0 JWT bearer grant (RFC 7523) of service-account keys. The assertion must be an RS256
 *    JWT signed by the key of an account the server knows, with `aud` this URL, the insert scope and a live `exp`;
 *    answers `{access_token, expires_in, token_type}`.
 *  - a metadata server (plain HTTP, as on the platform): `GET /computeMetadata/v1/instance/service-accounts/default/token`
 *    with `Metadata-Flavor: Google` answers the ambient identity's token.
 *  - `POST /bigquery/v2/projects/{p}/datasets/{d}/tables/{t}/insertAll` with `Authorization: Bearer <token>`:
 *    `{rows: [{insertId, json}]}`; rows are kept per table, de-duplicated by insertId; answers `{kind, insertErrors?}`.
 * Faults can be queued: answer the next inserts with a status (429, 500, 401), or refuse given rows (insertErrors).
 */
import { createVerify, generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedCert } from "./httpTarget.js";

export const INSERT_SCOPE = "https://www.googleapis.com/auth/bigquery.insertdata";

export interface WarehouseRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface WarehouseServer {
  /** host:port of the HTTPS API (a destination's target). */
  target: string;
  /** The certificate to trust (a destination's ca_cert). */
  ca: string;
  tokenUri: string;
  /** The metadata server's token URL (pluginConfig.forwarding.warehouse.metadataTokenUrl). */
  metadataTokenUrl: string;
  /** A service-account key file for `project`, known to the token endpoint. */
  serviceAccountJson(project: string, email?: string): string;
  /** Rows taken per "project/dataset/table". */
  rows: Map<string, Record<string, unknown>[]>;
  requests: WarehouseRequest[];
  tokensIssued: number;
  /** The next `n` inserts answer `status` (after authenticating). */
  failNext(status: number, n?: number): void;
  /** The next insert refuses these row indexes (insertErrors). */
  refuseRows(indexes: number[]): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const listen = (s: Server) => new Promise<number>((r) => s.listen(0, "127.0.0.1", () => r((s.address() as AddressInfo).port)));

export async function startWarehouseServer(): Promise<WarehouseServer> {
  const { key, cert } = selfSignedCert();
  const accounts = new Map<string, string>(); // client_email → public key PEM
  const tokens = new Set<string>();
  const rows = new Map<string, Record<string, unknown>[]>();
  const seen = new Set<string>();
  const requests: WarehouseRequest[] = [];
  let failures: number[] = [];
  let refuse: number[] = [];
  let tokensIssued = 0;
  let tokenUri = "";

  const issue = (res: ServerResponse) => {
    const token = `ya29.${randomBytes(24).toString("base64url")}`;
    tokens.add(token);
    tokensIssued++;
    json(res, 200, { access_token: token, expires_in: 3599, token_type: "Bearer" });
  };

  /** Checks an RS256 JWT bearer assertion: signature by a known account, audience, scope, lifetime. */
  const assertionOk = (assertion: string): boolean => {
    const [h, c, sig] = assertion.split(".");
    if (!h || !c || !sig) return false;
    let claims: Record<string, unknown>;
    try {
      const header = JSON.parse(Buffer.from(h, "base64url").toString()) as Record<string, unknown>;
      if (header.alg !== "RS256") return false;
      claims = JSON.parse(Buffer.from(c, "base64url").toString()) as Record<string, unknown>;
    } catch {
      return false;
    }
    const pub = accounts.get(String(claims.iss));
    if (!pub) return false;
    if (!createVerify("RSA-SHA256").update(`${h}.${c}`).verify(pub, Buffer.from(sig, "base64url"))) return false;
    const now = Date.now() / 1000;
    return claims.aud === tokenUri && claims.scope === INSERT_SCOPE && Number(claims.exp) > now && Number(claims.iat) <= now + 60;
  };

  const api = createHttpsServer({ key, cert }, (req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = req.url ?? "/";
      requests.push({ method: req.method ?? "", path, headers: req.headers, body });
      if (req.method === "POST" && path === "/token") {
        const form = new URLSearchParams(body);
        if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" || !assertionOk(form.get("assertion") ?? "")) {
          return json(res, 400, { error: "invalid_grant", error_description: "Invalid JWT Signature." });
        }
        return issue(res);
      }
      const m = /^\/bigquery\/v2\/projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)\/insertAll$/.exec(path);
      if (req.method !== "POST" || !m) return json(res, 404, { error: { code: 404, message: "Not found" } });
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
      if (!auth || !tokens.has(auth[1])) return json(res, 401, { error: { code: 401, message: "Request had invalid authentication credentials." } });
      const fail = failures.shift();
      if (fail !== undefined) {
        if (fail === 401) tokens.delete(auth[1]);
        res.setHeader("retry-after", "0");
        return json(res, fail, { error: { code: fail, message: "injected" } });
      }
      let parsed: { rows?: { insertId?: string; json?: Record<string, unknown> }[] };
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        return json(res, 400, { error: { code: 400, message: "Parse error" } });
      }
      if (!Array.isArray(parsed.rows)) return json(res, 400, { error: { code: 400, message: "No rows present in the request." } });
      const table = `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}/${decodeURIComponent(m[3])}`;
      const list = rows.get(table) ?? [];
      rows.set(table, list);
      const refused = new Set(refuse);
      refuse = [];
      parsed.rows.forEach((r, i) => {
        if (refused.has(i)) return;
        const id = `${table}/${r.insertId ?? i}`;
        if (r.insertId && seen.has(id)) return;
        seen.add(id);
        list.push(r.json ?? {});
      });
      const insertErrors = [...refused].map((index) => ({ index, errors: [{ reason: "invalid", message: "no such field" }] }));
      return json(res, 200, { kind: "bigquery#tableDataInsertAllResponse", ...(insertErrors.length ? { insertErrors } : {}) });
    })().catch((err) => json(res, 500, { error: String(err) }));
  });
  const metadata = createHttpServer((req, res) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: "" });
    if (req.url !== "/computeMetadata/v1/instance/service-accounts/default/token") return json(res, 404, {});
    if (req.headers["metadata-flavor"] !== "Google") return json(res, 403, {});
    issue(res);
  });
  const apiPort = await listen(api);
  const metaPort = await listen(metadata);
  tokenUri = `https://127.0.0.1:${apiPort}/token`;

  return {
    target: `127.0.0.1:${apiPort}`,
    ca: cert,
    tokenUri,
    metadataTokenUrl: `http://127.0.0.1:${metaPort}/computeMetadata/v1/instance/service-accounts/default/token`,
    serviceAccountJson(project, email = `forwarder@${project}.iam.gserviceaccount.com`) {
      const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
      accounts.set(email, pair.publicKey.export({ type: "spki", format: "pem" }).toString());
      return JSON.stringify({
        type: "service_account",
        project_id: project,
        private_key_id: randomBytes(20).toString("hex"),
        private_key: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        client_email: email,
        client_id: "1234567890",
        token_uri: tokenUri,
      });
    },
    rows,
    requests,
    get tokensIssued() {
      return tokensIssued;
    },
    failNext(status, n = 1) {
      failures = [...failures, ...Array(n).fill(status)];
    },
    refuseRows(indexes) {
      refuse = indexes;
    },
    close: async () => {
      api.closeAllConnections();
      metadata.closeAllConnections();
      await Promise.all([new Promise((r) => api.close(r)), new Promise((r) => metadata.close(r))]);
    },
  };
}
