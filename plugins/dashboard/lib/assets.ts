import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder of the built web app (vite writes it to dist/plugins/dashboard/web, with .vite/manifest.json): beside this
 * module when it runs from dist/, else in the project's dist/ three folders up (the plugin running from its TypeScript
 * sources, in tests). NMS_DASHBOARD_DIR overrides both.
 */
export function webAppDir(): string {
  const override = process.env.NMS_DASHBOARD_DIR;
  if (override) return override;
  const beside = fileURLToPath(new URL("../web/", import.meta.url));
  if (existsSync(join(beside, ".vite", "manifest.json"))) return beside;
  return join(fileURLToPath(new URL("../../../dist/", import.meta.url)), "plugins", "dashboard", "web");
}

/**
 * The page's Content-Security-Policy: nothing from another origin (no CDN), scripts and styles from this service only;
 * Socket.IO and the API on the same origin.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");
