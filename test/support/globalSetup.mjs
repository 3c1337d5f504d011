// One PostgreSQL for the whole run: DATABASE_URL when set, else an embedded server in a
// temporary folder. Each test file makes its own database on it (test/support/db.ts).
// Plain ESM over the built kernel (npm test builds first): jest loads global setup outside its transform.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default async function globalSetup() {
  let url = process.env.DATABASE_URL;
  if (!url) {
    const { EmbeddedServer } = await import("../../dist/core/store/EmbeddedServer.js");
    const { JsonLogger } = await import("../../dist/core/logging/Logger.js");
    const dir = mkdtempSync(join(tmpdir(), "nms-test-pg-"));
    const server = new EmbeddedServer(dir, new JsonLogger("warn", "test-pg", () => undefined));
    url = (await server.start()).url;
    globalThis.__NMS_TEST_PG__ = server;
    globalThis.__NMS_TEST_PG_DIR__ = dir;
  }
  // Jest runs in band: the test files see this process's environment.
  process.env.NMS_TEST_ADMIN_DATABASE_URL = url;
}
