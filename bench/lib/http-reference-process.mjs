// Starts the bare reference server (bench/lib/http-reference.mjs) as a child process on a database: the floor that
// bench/http-load.mjs and bench/http-profile.mjs compare the service with.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./http-reference.mjs", import.meta.url));

/** Resolves `{url, child, stop()}` once the server prints its ready line; rejects if it exits first. */
export function startReference(dbUrl) {
  const child = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH, REF_DATABASE_URL: dbUrl },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.once("exit", (code) => reject(new Error(`reference server exited (${code})`)));
    child.stdout.on("data", (c) => {
      out += c;
      const m = /reference ready at (\S+)/.exec(out);
      if (m) resolve({ url: m[1], child, stop: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))) });
    });
  });
}
