// notes/test/notes.test.ts: node:test here; nms-core/testing needs no particular runner.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { startTestKernel, type TestKernel } from "nms-core/testing";
import { notesPlugin } from "./index.js";

let k: TestKernel;
before(async () => {
  // A real kernel on a free loopback port, with the built-in plugins and this one, on an embedded PostgreSQL
  // (or a fresh database on the server named by DATABASE_URL).
  k = await startTestKernel({ plugins: [notesPlugin], overrides: { pluginConfig: { notes: { pageSize: 10 } } } });
});
after(() => k?.stop());

it("lets an operator add a note and a viewer read it", async () => {
  const created = await k.request("POST", "/notes", { token: await k.token("operator"), body: { text: "core switch swap on Friday" } });
  assert.equal(created.status, 201);
  const list = await k.request("GET", "/notes", { token: await k.token("viewer") });
  assert.deepEqual(
    (list.body as { text: string }[]).map((n) => n.text),
    ["core switch swap on Friday"],
  );
});

it("answers 400 with the envelope for a node that does not exist", async () => {
  const res = await k.request("POST", "/notes", { body: { text: "x", node_id: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10" } });
  assert.equal(res.status, 400);
  assert.deepEqual((res.body as { error: { code: string } }).error.code, "unknown_reference");
});
