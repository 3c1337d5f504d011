// Builds the dashboard into dist/plugins/dashboard/web (served at / and /ui/ by the dashboard plugin), with a .gz and
// a .br beside each text asset so the server can send them precompressed. No CDN: everything is bundled.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));
const outDir = fileURLToPath(new URL("../../../dist/plugins/dashboard/web/", import.meta.url));

function precompress() {
  return {
    name: "nms-precompress",
    apply: "build",
    closeBundle() {
      const walk = (dir) => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else if (/\.(js|css|html|svg|json)$/.test(name)) {
            const data = readFileSync(path);
            writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
            writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
          }
        }
      };
      walk(outDir);
    },
  };
}

export default defineConfig({
  root: here,
  base: "./",
  logLevel: "warn",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir,
    emptyOutDir: true,
    manifest: true,
    target: "es2020",
    sourcemap: false,
    reportCompressedSize: false,
    modulePreload: { polyfill: false },
  },
  plugins: [precompress()],
});
