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

/**
 * HTTP helpers for one REST collection (`/api/v1/profiles`, …) of the current test kernel; the
 * token defaults to the bootstrap admin. `kernel` is read lazily (kernels start in beforeAll).
 */
export function collection(kernel: () => TestKernel, base: string) {
  const k = () => kernel();
  return {
    post: (body: unknown, token = k().adminToken) =>
      k()
        .http.post(base)
        .set(bearer(token))
        .send(body as object),
    put: (id: string, body: unknown, token = k().adminToken) =>
      k()
        .http.put(`${base}/${id}`)
        .set(bearer(token))
        .send(body as object),
    get: (id: string, token = k().adminToken) => k().http.get(`${base}/${id}`).set(bearer(token)),
    del: (id: string, token = k().adminToken) => k().http.delete(`${base}/${id}`).set(bearer(token)),
    list: (query: Record<string, string | number> = {}, token = k().adminToken) => k().http.get(base).query(query).set(bearer(token)),
  };
}
