import { rmSync } from "node:fs";

export default async function globalTeardown() {
  await globalThis.__NMS_TEST_PG__?.stop();
  // The server's folder goes with it: left behind, every run kept its whole cluster (about 2 GB) in the temporary folder.
  if (globalThis.__NMS_TEST_PG_DIR__) rmSync(globalThis.__NMS_TEST_PG_DIR__, { recursive: true, force: true });
}
