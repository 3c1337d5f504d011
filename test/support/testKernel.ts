/**
 * The project's own test kernel: nms-core/testing's (core/testing), with only the given plugins by default, on a
 * fresh database of the run's PostgreSQL (NMS_TEST_ADMIN_DATABASE_URL, from test/support/globalSetup.mjs), plus a
 * supertest client.
 */
import request from "supertest";
import {
  startTestKernel as startSdkTestKernel,
  TEST_ADMIN_TOKEN,
  type TestKernel as SdkTestKernel,
  type TestKernelOptions as SdkOptions,
} from "../../core/testing/index.js";

export const BOOTSTRAP_TOKEN = TEST_ADMIN_TOKEN;

export interface TestKernel extends SdkTestKernel {
  http: ReturnType<typeof request>;
}

export type TestKernelOptions = Omit<SdkOptions, "builtinPlugins">;

/**
 * A kernel on a fresh database of the run's PostgreSQL, on a free loopback port, with only the given plugins.
 * One at a time per test file: Ts.ED's container is one per process, so a second kernel started while
 * another runs would serve requests with the first one's services (use spawnKernel for replicas).
 */
export async function startTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const k = await startSdkTestKernel({ ...options, builtinPlugins: false });
  return Object.assign(k, { http: request(k.url) });
}
