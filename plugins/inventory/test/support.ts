import type { Scope } from "../../../core/index.js";
import { startTestKernel, type TestKernel, type TestKernelOptions } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../index.js";

/** A test kernel with the inventory plugin (and only it, unless more are given). */
export function startInventoryKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  return startTestKernel({ ...options, plugins: [inventoryPlugin, ...(options.plugins ?? [])] });
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Creates a folder as admin through the API; returns its id. */
export async function createFolder(k: TestKernel, body: Record<string, unknown>): Promise<string> {
  const res = await k.http.post("/api/v1/node-groups").set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`folder create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** Creates a node as admin through the API; returns its id. */
export async function createNode(k: TestKernel, body: Record<string, unknown>): Promise<string> {
  const res = await k.http.post("/api/v1/nodes").set(bearer(k.adminToken)).send(body);
  if (res.status !== 201) throw new Error(`node create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

export function folderScope(...folders: string[]): Scope {
  return { folders };
}
