import { existsSync, statSync } from "node:fs";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import type { NextFunction, Request, Response } from "express";

/** Static files a plugin serves outside /api/v1 (manifest key `staticAssets`), e.g. a web app at `/` and `/ui/`. */
export interface StaticAssetsDeclaration {
  /** URL path it is served under: "/" or "/ui" (no trailing slash but for the root). Never under /api or /socket.io. */
  mount: string;
  /** Absolute folder holding the files. A folder that does not exist serves nothing (the app was not built). */
  dir: string;
  /** File (relative to dir) answered for a GET under mount that names no file and accepts HTML: a single-page app's index.html. */
  fallback?: string;
  /** Headers added to HTML answers (e.g. a Content-Security-Policy). */
  htmlHeaders?: Record<string, string>;
}

/** A content-hashed file name (name-<hash>.js, name.<hash>.css …): never changes, so cached for a year. */
const HASHED = /[.-][A-Za-z0-9_-]{8,}\.(?:js|mjs|css|woff2?|png|svg|jpg|webp|ico|map)$/;
const RESERVED = /^\/(?:api|socket\.io)(?:\/|$)/;

/** Checks a plugin's declarations at boot (a bad one stops the boot naming the plugin). */
export function checkStaticAssets(owner: string, list: StaticAssetsDeclaration[]): void {
  for (const s of list) {
    if (typeof s.mount !== "string" || !/^\/(?:[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)*)?$/.test(s.mount) || RESERVED.test(s.mount)) {
      throw new Error(`plugin "${owner}": staticAssets mount "${String(s.mount)}" must be "/" or a lower-case path outside /api and /socket.io`);
    }
    if (typeof s.dir !== "string" || !isAbsolute(s.dir)) throw new Error(`plugin "${owner}": staticAssets dir must be an absolute path`);
  }
}

/**
 * Express middleware serving the declared folders for GET and HEAD: precompressed `<file>.br` / `<file>.gz` when the
 * client accepts them, hashed assets cached as immutable, everything else (index.html) revalidated on every load.
 * Paths under /api and /socket.io are never looked at.
 */
export function staticAssetsMiddleware(list: (StaticAssetsDeclaration & { owner: string })[]) {
  for (const s of list) checkStaticAssets(s.owner, [s]);
  const mounts = [...list].sort((a, b) => b.mount.length - a.mount.length);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    const path = req.path;
    if (RESERVED.test(path)) return next();
    for (const m of mounts) {
      const under = m.mount === "/" ? path : path === m.mount ? "/" : path.startsWith(`${m.mount}/`) ? path.slice(m.mount.length) : null;
      if (under === null) continue;
      if (!existsSync(m.dir)) return next();
      let rel: string;
      try {
        rel = normalize(decodeURIComponent(under)).replace(/^[/\\]+/, "");
      } catch {
        return next();
      }
      let file = join(m.dir, rel);
      if (relative(m.dir, file).split(sep).includes("..") || rel.split(/[/\\]/).some((p) => p.startsWith("."))) return next();
      if (!isFile(file)) {
        if (under === "/" || (m.fallback && !/\.[a-z0-9]+$/i.test(under) && req.accepts("html"))) file = join(m.dir, m.fallback ?? "index.html");
        if (!isFile(file)) return next();
      }
      send(req, res, next, file, m);
      return;
    }
    next();
  };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

function send(req: Request, res: Response, next: NextFunction, file: string, decl: StaticAssetsDeclaration): void {
  const ext = (/\.[a-z0-9]+$/i.exec(file)?.[0] ?? "").toLowerCase();
  const accepted = String(req.headers["accept-encoding"] ?? "");
  let served = file;
  let encoding: string | null = null;
  for (const [enc, suffix] of [
    ["br", ".br"],
    ["gzip", ".gz"],
  ] as const) {
    if (new RegExp(`\\b${enc}\\b`).test(accepted) && isFile(file + suffix)) {
      served = file + suffix;
      encoding = enc;
      break;
    }
  }
  const headers: Record<string, string> = {
    "Content-Type": TYPES[ext] ?? "application/octet-stream",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": HASHED.test(file) ? "public, max-age=31536000, immutable" : "no-cache",
    Vary: "Accept-Encoding",
    ...(encoding ? { "Content-Encoding": encoding } : {}),
    ...(ext === ".html" ? (decl.htmlHeaders ?? {}) : {}),
  };
  res.sendFile(served, { headers, dotfiles: "deny", cacheControl: false, lastModified: true, etag: true }, (err) => {
    if (err && !res.headersSent) next();
  });
}
