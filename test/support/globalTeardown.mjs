import { rmSync } from "node:fs";

// The run's server stops, and its folder goes with it: each run's cluster (WAL included) takes a gigabyte or more,
// and the runs of a day filled /tmp.
export default async function globalTeardown() {
  await globalThis.__NMS_TEST_PG__?.stop();
  if (globalThis.__NMS_TEST_PG_DIR__) rmSync(globalThis.__NMS_TEST_PG_DIR__, { recursive: true, force: true });
}
