/**
 * The queue journal (what the receivers on the main thread take: traps, HTTP ingest, forwarded events): a service
 * killed with SIGKILL while HTTP ingest requests keep coming stores, after its restart, every event a request was
 * answered 202 for, and each exactly once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, rawQuery } from "../../../test/support/db.js";
import { spawnKernel } from "../../../test/support/spawnKernel.js";
import { until } from "../../../test/support/wait.js";

const dataDir = mkdtempSync(join(tmpdir(), "nms-queue-journal-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const TOKEN = "queue-journal-test-bootstrap-token-0123456";

test("after SIGKILL during HTTP ingest, every event answered 202 is stored once after the restart", async () => {
  const databaseUrl = await createTestDatabase();
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: databaseUrl,
    NMS_BUILTIN_PLUGINS: "true",
    NMS__pluginConfig__polling__embeddedPoller: "false",
    // A flush interval longer than the run: nothing accepted is stored before the kill unless a batch fills.
    NMS__pluginConfig__events__flushMs: "60000",
    NMS_BOOTSTRAP_TOKEN: TOKEN,
  };
  const first = await spawnKernel({ env, dataDir });
  const created = await fetch(`${first.url}/api/v1/event-sources`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ kind: "http", name: "crash test" }),
  });
  const { token } = (await created.json()) as { token: string };
  // Requests of 50 events, one after the other, until the kill; an event counts as acknowledged once its request got 202.
  let acknowledged = 0;
  let sent = 0;
  let stop = false;
  const poster = (async () => {
    while (!stop) {
      const events = Array.from({ length: 50 }, (_, i) => ({ message: `queue crash ${sent + i}` }));
      sent += 50;
      const res = await fetch(`${first.url}/api/v1/events/ingest`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ events }),
      }).catch(() => null);
      if (res?.status === 202) acknowledged += ((await res.json()) as { accepted: number }).accepted;
      else break;
    }
  })();
  await until(
    "ingest under way",
    async () => acknowledged >= 3000,
    30_000,
    () => first.stderr().slice(-2000),
  );
  first.child.kill("SIGKILL");
  await first.exited;
  stop = true;
  await poster;
  const second = await spawnKernel({ env: { ...env, NMS__pluginConfig__events__flushMs: "200" }, dataDir });
  try {
    // Replayed at start and written within the (now short) flush interval.
    const counts = await until(
      "replayed",
      async () => {
        const [r] = await rawQuery<{ n: string; distinct: string }>(
          databaseUrl,
          "SELECT count(*) AS n, count(DISTINCT message) AS distinct FROM events.events WHERE message LIKE 'queue crash %'",
        );
        return Number(r.n) >= acknowledged ? { n: Number(r.n), distinct: Number(r.distinct) } : null;
      },
      90_000,
      () => `acknowledged ${acknowledged}; ${second.stderr().slice(-1000)}`,
    );
    expect(counts.n).toBe(counts.distinct);
    // Every acknowledged event, and at most the ones of the request in flight at the kill besides.
    expect(counts.n).toBeGreaterThanOrEqual(acknowledged);
    expect(counts.n).toBeLessThanOrEqual(acknowledged + 50);
  } finally {
    await second.stop();
  }
}, 180_000);
