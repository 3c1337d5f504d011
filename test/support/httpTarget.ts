/**
 * A local HTTP or HTTPS server for URL-check tests, on 127.0.0.1 and a free port.
 *
 * Routes (any method):
 *   /ok                      200 "ok"
 *   /status/CODE             that status, body "status CODE"
 *   /redirect/N              302 to /redirect/N-1; /redirect/0 answers 200 "redirected"
 *   /redirect-to?url=U       302 to U (absolute: another server)
 *   /slow/MS                 waits MS ms, then 200 "slow"
 *   /large/BYTES             BYTES of "a" in 16 KiB chunks, following backpressure; what was
 *                            written and whether the client went away are in `large`
 *   /json                    the `json` document given at start (application/json)
 *   /text?body=T             200 with body T (text/plain)
 *   /auth/basic              200 "welcome" with the right Basic credentials, else 401
 *   /auth/bearer             200 "welcome" with the right Bearer token, else 401
 *   /echo                    200 JSON {method, path, headers}
 * Every request is recorded in `requests`.
 *
 * HTTPS uses a self-signed certificate for 127.0.0.1/localhost made at test time with the
 * `openssl` CLI (Node's crypto makes keys but not certificates), valid for `certDays` days.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface LargeBodyStats {
  /** Bytes the server asked for. */
  requested: number;
  /** Bytes written to the socket before the response ended or the client went away. */
  written: number;
  /** True when the client closed the connection before the whole body was written. */
  aborted: boolean;
}

export interface HttpTargetOptions {
  tls?: boolean;
  /** Days the self-signed certificate is valid (HTTPS). */
  certDays?: number;
  basic?: { username: string; password: string };
  bearer?: string;
  /** The document /json answers. */
  json?: unknown;
}

export interface HttpTarget {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  tls: boolean;
  requests: RecordedRequest[];
  /** Stats of the /large responses, in order. */
  large: LargeBodyStats[];
  /** Waits until the latest /large response has finished or was abandoned. */
  largeSettled(): Promise<LargeBodyStats>;
  close(): Promise<void>;
}

export interface SelfSignedCert {
  key: string;
  cert: string;
}

/** A self-signed certificate (P-256): by default for CN=localhost with SAN IP:127.0.0.1 and DNS:localhost. */
export function selfSignedCert(days = 30, subject: { cn?: string; san?: string } = {}): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), "nms-cert-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        String(days),
        "-subj",
        `/CN=${subject.cn ?? "localhost"}`,
        "-addext",
        `subjectAltName=${subject.san ?? "IP:127.0.0.1,DNS:localhost"}`,
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } catch (err) {
    throw new Error(`could not make a test certificate with openssl (install the openssl package): ${(err as Error).message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CHUNK = Buffer.alloc(16 * 1024, "a");

export async function startHttpTarget(options: HttpTargetOptions = {}): Promise<HttpTarget> {
  const requests: RecordedRequest[] = [];
  const large: LargeBodyStats[] = [];
  const largeDone: Promise<LargeBodyStats>[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8", extra: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body), ...extra });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://target.invalid");
    requests.push({ method: req.method ?? "GET", path: url.pathname + url.search, headers: { ...req.headers } });
    const parts = url.pathname.split("/").filter(Boolean);
    const auth = req.headers.authorization ?? "";
    // Drain any request body so keep-alive connections stay usable.
    req.resume();

    switch (parts[0]) {
      case "ok":
        return send(res, 200, "ok");
      case "status": {
        const code = Number(parts[1]);
        return send(res, code >= 100 && code <= 599 ? code : 400, `status ${parts[1]}`);
      }
      case "redirect": {
        const n = Number(parts[1] ?? 0);
        if (n > 0) return send(res, 302, "", "text/plain", { location: `/redirect/${n - 1}` });
        return send(res, 200, "redirected");
      }
      case "redirect-to":
        return send(res, 302, "", "text/plain", { location: url.searchParams.get("url") ?? "/ok" });
      case "slow": {
        const t = setTimeout(
          () => {
            timers.delete(t);
            if (!res.destroyed) send(res, 200, "slow");
          },
          Number(parts[1] ?? 1000),
        );
        timers.add(t);
        res.on("close", () => {
          clearTimeout(t);
          timers.delete(t);
        });
        return;
      }
      case "large": {
        const stats: LargeBodyStats = { requested: Number(parts[1] ?? 0), written: 0, aborted: false };
        large.push(stats);
        largeDone.push(
          new Promise<LargeBodyStats>((resolve) => {
            res.writeHead(200, { "content-type": "text/plain", "content-length": stats.requested });
            const pump = () => {
              while (stats.written < stats.requested && !res.destroyed) {
                const n = Math.min(CHUNK.length, stats.requested - stats.written);
                stats.written += n;
                if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return; // wait for drain
              }
              if (stats.written >= stats.requested && !res.destroyed) res.end();
            };
            res.on("drain", pump);
            res.on("close", () => {
              stats.aborted = !res.writableFinished;
              resolve(stats);
            });
            pump();
          }),
        );
        return;
      }
      case "json":
        return send(res, 200, JSON.stringify(options.json ?? {}), "application/json");
      case "text":
        return send(res, 200, url.searchParams.get("body") ?? "");
      case "auth": {
        let ok = false;
        if (parts[1] === "basic" && options.basic) {
          const expected = Buffer.from(`${options.basic.username}:${options.basic.password}`).toString("base64");
          ok = auth === `Basic ${expected}`;
        } else if (parts[1] === "bearer" && options.bearer) {
          ok = auth === `Bearer ${options.bearer}`;
        }
        if (ok) return send(res, 200, "welcome");
        return send(res, 401, "unauthorized", "text/plain", { "www-authenticate": parts[1] === "bearer" ? "Bearer" : 'Basic realm="test"' });
      }
      case "echo":
        return send(res, 200, JSON.stringify({ method: req.method, path: url.pathname + url.search, headers: req.headers }), "application/json");
      default:
        return send(res, 404, "not found");
    }
  };

  const tls = options.tls === true;
  const server: Server = tls ? createHttpsServer({ ...selfSignedCert(options.certDays ?? 30) }, handle) : createHttpServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    tls,
    requests,
    large,
    largeSettled: () => largeDone[largeDone.length - 1] ?? Promise.reject(new Error("no /large request was made")),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
