/**
 * The kernel's manifest key `staticAssets`: a plugin's folder served outside /api/v1, precompressed variants,
 * immutable caching of hashed files, no caching of index.html, the single-page fallback, and nothing served for
 * /api or /socket.io or outside the folder.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { definePlugin } from "../../core/index.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

let k: TestKernel;
const dir = mkdtempSync(join(tmpdir(), "nms-static-"));

beforeAll(async () => {
  mkdirSync(join(dir, "assets"));
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>app</title>");
  writeFileSync(join(dir, "assets", "app-AbCdEf12.js"), "console.log('app');".repeat(50));
  writeFileSync(join(dir, "assets", "app-AbCdEf12.js.gz"), gzipSync("console.log('app');".repeat(50)));
  writeFileSync(join(dir, ".secret"), "no");
  writeFileSync(join(tmpdir(), "nms-static-outside.txt"), "outside");
  const staticPlugin = definePlugin({
    id: "static-fixture",
    version: "0.1.0",
    kernel: "^0.1.0",
    staticAssets: [
      { mount: "/", dir, fallback: "index.html", htmlHeaders: { "Content-Security-Policy": "default-src 'self'" } },
      { mount: "/ui", dir, fallback: "index.html" },
    ],
  });
  k = await startTestKernel({ plugins: [staticPlugin], skeleton: true });
});

afterAll(async () => {
  await k?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${k.url}${path}`, { headers });

describe("manifest staticAssets", () => {
  it("serves index.html at / and /ui/ with no-cache and the declared HTML headers", async () => {
    for (const path of ["/", "/ui/", "/ui"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(await res.text()).toContain("<title>app</title>");
    }
    expect((await get("/")).headers.get("content-security-policy")).toBe("default-src 'self'");
  });

  it("answers the app for client-side routes that accept HTML, but 404 for missing files", async () => {
    const page = await get("/nodes/123", { Accept: "text/html" });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>app</title>");
    expect((await get("/assets/missing-12345678.js")).status).toBe(404);
  });

  it("serves hashed assets immutable, gzip when accepted and the raw file otherwise", async () => {
    const gz = await get("/assets/app-AbCdEf12.js", { "Accept-Encoding": "gzip" });
    expect(gz.status).toBe(200);
    expect(gz.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(gz.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(await gz.text()).toContain("console.log('app')"); // fetch decodes the gzip body
    const raw = await fetch(`${k.url}/ui/assets/app-AbCdEf12.js`, { headers: { "Accept-Encoding": "identity" } });
    expect(raw.headers.get("content-encoding")).toBeNull();
    expect(Number(raw.headers.get("content-length"))).toBe("console.log('app');".length * 50);
  });

  it("never serves dot files, paths outside the folder, or anything under /api and /socket.io", async () => {
    expect((await get("/.secret")).status).toBe(404);
    expect((await get("/..%2fnms-static-outside.txt")).status).toBe(404);
    expect((await get("/%2e%2e/nms-static-outside.txt")).status).toBe(404);
    const api = await get("/api/v1/does-not-exist", { Accept: "text/html" });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ error: expect.objectContaining({ code: expect.any(String) }) });
    expect((await get("/api/v1/health")).status).toBe(200);
  });

  it("refuses a mount under /api at boot, naming the plugin", async () => {
    const { staticAssetsMiddleware } = await import("../../core/http/staticAssets.js");
    expect(() => staticAssetsMiddleware([{ owner: "bad", mount: "/api/x", dir }])).toThrow(/plugin "bad": staticAssets mount/);
    expect(() => staticAssetsMiddleware([{ owner: "bad", mount: "/ui", dir: "relative" }])).toThrow(/absolute/);
  });
});
