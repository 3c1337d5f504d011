/**
 * A deployment takes its own export back (merge): every row updates in place, nothing is skipped but the built-in
 * event sources, and an http event source keeps the ingest token it had (its senders go on posting).
 */
import { startTestKernel, type TestKernel } from "../support/testKernel.js";
import { BUNDLE_PLUGINS, exportBundle, importBundle } from "./support.js";

let k: TestKernel;
afterAll(async () => k?.stop());

it("re-imports its own export: rows updated in place, an http source's ingest token kept", async () => {
  k = await startTestKernel({
    plugins: BUNDLE_PLUGINS,
    overrides: {
      pluginConfig: {
        polling: { embeddedPoller: false },
        events: { syslog: { udp: null, tcp: null, tls: null }, traps: { udp: null }, flushMs: 50 },
        flows: { udp: null },
      },
    },
  });
  const node = await k.request("POST", "/nodes", { body: { name: "n1", address: "192.0.2.1" } });
  expect(node.status).toBe(201);
  const hook = await k.request("POST", "/event-sources", { body: { kind: "http", name: "hook" } });
  expect(hook.status).toBe(201);
  const token = (hook.body as { token: string }).token;
  expect((await k.request("POST", "/event-sources", { body: { kind: "syslog", name: "n1 syslog", node_id: (node.body as { id: string }).id } })).status).toBe(
    201,
  );

  const { bundle } = await exportBundle(k);
  const res = await importBundle(k, bundle);
  expect(res.status).toBe(200);
  const tables = (res.body as { tables: Record<string, { created: number; updated: number; skipped: number }> }).tables;
  expect(tables.nodes).toMatchObject({ created: 0, updated: 1, skipped: 0 });
  expect(tables.event_sources).toMatchObject({ created: 0, updated: 2, skipped: 2 });
  expect((res.body as { notes: { code: string }[] }).notes.map((n) => n.code)).toEqual(["skipped_builtin"]);

  // The http source's token still opens its ingest route.
  const ingest = await k.request("POST", "/events/ingest", { token, body: { events: [{ message: "after the re-import" }] } });
  expect(ingest.status).toBeLessThan(300);
  // And the export is the same again (but for when it was made).
  const again = (await exportBundle(k)).bundle;
  expect({ ...again, exported_at: null }).toEqual({ ...bundle, exported_at: null });
}, 120_000);
