/**
 * The hour rollups job catches up: hours whose minute rows were written but never rolled up (the service was down
 * when the job would have run) are rolled up at the next run, not only the last two hours.
 */
import { dataSet, ip4, ipfixMessage, sendDatagrams, templateSet, u, IPV4_FLOW_FIELDS } from "../../../test/support/flowPeers.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { flowsPlugin } from "../index.js";
import { FlowCollector } from "../services/FlowCollector.js";

let k: TestKernel;
let port: number;
beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, flowsPlugin],
    overrides: { pluginConfig: { flows: { udp: 0, bindAddress: "127.0.0.1", flushMs: 200 } } },
  });
  const listeners = (await k.request("GET", "/listeners")).body as { listeners: { name: string; port: number }[] };
  port = listeners.listeners.find((l) => l.name === "flows.udp")!.port;
});
afterAll(() => k?.stop());

const FIELDS = IPV4_FLOW_FIELDS;

/** One IPFIX flow of `bytes` bytes that ended at `endSecs`, received and flushed into the minute rollups. */
async function flowEndedAt(endSecs: number, bytes: number, seq: number): Promise<void> {
  const collector = k.context("flows").get(FlowCollector);
  const now = Math.floor(Date.now() / 1000);
  const record = Buffer.concat([ip4("192.0.2.10"), ip4("198.51.100.20"), u(1, 6), u(2, 50000), u(2, 443), u(8, bytes), u(8, 1), u(4, endSecs)]);
  await sendDatagrams(port, [ipfixMessage({ domain: 1, exportSecs: now, seq }, [templateSet(10, [{ id: 300, fields: FIELDS }]), dataSet(300, [record])])]);
  const minuteBytes = async () =>
    (
      await k
        .context("flows")
        .store.query<{ n: number }>("SELECT coalesce(sum(bytes), 0)::float8 AS n FROM flows.rollup_1m WHERE at = date_trunc('minute', to_timestamp($1))", [
          endSecs,
        ])
    ).rows[0].n;
  for (let i = 0; i < 100 && (await minuteBytes()) < bytes; i++) {
    await collector.flush();
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(await minuteBytes()).toBe(bytes);
}

/** Bytes of the pair in the hour rollups (a range over 48 hours reads them). */
async function hourlyBytes(): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const rows = (await k.request("GET", `/flow/conversations?from=${now - 3 * 86400}&to=${now + 3600}`)).body as { bytes: number }[];
  expect(Array.isArray(rows)).toBe(true);
  return rows.reduce((a, r) => a + r.bytes, 0);
}

it("rolls up the hours missed while the job did not run, from the newest hour already rolled up", async () => {
  const collector = k.context("flows").get(FlowCollector);
  const hour = 3600;
  const now = Math.floor(Date.now() / 1000);
  await flowEndedAt(now - 6 * hour, 1000, 1);
  await flowEndedAt(now - 4 * hour, 2000, 2);
  // With no hour rolled up yet, the job starts from the oldest minute row.
  await collector.catchUpHours();
  expect(await hourlyBytes()).toBe(3000);
  // The hour 4 hours ago as if the service had been down when the job would have rolled it up: its minute rows are
  // there, its hour rows are not. The last two hours alone (what the job recomputed before) miss it; catching up
  // from the newest hour rolled up (6 hours ago) finds it.
  await k.context("flows").store.query("DELETE FROM flows.rollup_1h WHERE at = date_trunc('hour', to_timestamp($1))", [now - 4 * hour]);
  expect(await hourlyBytes()).toBe(1000);
  await collector.rollHours(Date.now() - 2 * 3600_000);
  expect(await hourlyBytes()).toBe(1000);
  expect(await collector.catchUpHours()).toBeGreaterThan(0);
  expect(await hourlyBytes()).toBe(3000);
  // Idempotent: again, the same sums.
  await collector.catchUpHours();
  expect(await hourlyBytes()).toBe(3000);
});
