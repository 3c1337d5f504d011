/**
 * GET /api/v1/system/hosts and GET /api/v1/monitoring-gaps as the spec words them: shapes,
 * access, the cap and the degraded answer, and skeleton mode (hosts: the core alone; gaps: 503).
 */
import { expectError } from "../../../test/support/assertions.js";
import { rawQuery } from "../../../test/support/db.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../index.js";
import { HostCounterRegistry } from "../services/HostCounterRegistry.js";
import { GAP_LIST_CAP } from "../services/PollerRegistry.js";

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The host telemetry entry of the core, as the spec describes it, measured on this machine. */
function expectCoreEntry(e: Record<string, unknown>) {
  expect(e).toEqual({
    instance: "core",
    role: "core",
    online: true,
    pool: null,
    cpu_pct: expect.any(Number),
    load1: expect.any(Number),
    mem_total_bytes: expect.any(Number),
    mem_used_bytes: expect.any(Number),
    mem_used_pct: expect.any(Number),
    disk_used_pct: expect.any(Number),
    disks: expect.arrayContaining([{ mount: "/", size_bytes: expect.any(Number), used_bytes: expect.any(Number) }]),
    counters: expect.any(Object),
  });
  expect(e.cpu_pct).toBeGreaterThanOrEqual(0);
  expect(e.cpu_pct).toBeLessThanOrEqual(100);
  expect(e.mem_total_bytes).toBeGreaterThan(0);
  expect(e.mem_used_bytes).toBeLessThanOrEqual(e.mem_total_bytes as number);
  const disks = e.disks as { size_bytes: number; used_bytes: number }[];
  const highest = Math.max(...disks.filter((d) => d.size_bytes > 0).map((d) => (100 * d.used_bytes) / d.size_bytes));
  expect(e.disk_used_pct).toBeCloseTo(highest, 0);
}

describe("with a store", () => {
  let k: TestKernel;
  let viewer: string;
  let admin: string;

  beforeAll(async () => {
    k = await startTestKernel({ plugins: [inventoryPlugin, pollingPlugin], overrides: { pluginConfig: { polling: { embeddedPoller: false } } } });
    viewer = await k.token("viewer");
    admin = await k.token("admin");
  });
  afterAll(() => k?.stop());

  describe("GET /system/hosts", () => {
    it("needs a token; a viewer reads the core's own telemetry first", async () => {
      expectError(await k.http.get("/api/v1/system/hosts"), 401, "unauthorized");
      const res = await k.http.get("/api/v1/system/hosts").set(bearer(viewer));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(["hosts"]);
      expect(res.body.hosts).toHaveLength(1);
      expectCoreEntry(res.body.hosts[0]);
    });

    it("adds every poller that reported telemetry, with its pool, derived usage and online flag", async () => {
      const reg = await k.http.post("/api/v1/pollers/register").set(bearer(admin)).send({ poller_id: "dc2-a", pool: "dc2" });
      expect(reg.status).toBe(200);
      // Registered but silent about its host: not listed yet.
      expect((await k.http.get("/api/v1/system/hosts").set(bearer(viewer))).body.hosts).toHaveLength(1);
      const telemetry = {
        cpu_pct: 37.5,
        load1: 1.25,
        mem_total_bytes: 8_000_000_000,
        mem_used_bytes: 2_000_000_000,
        disks: [
          { mount: "/", size_bytes: 100_000_000_000, used_bytes: 25_000_000_000 },
          { mount: "buffer", size_bytes: 50_000_000_000, used_bytes: 45_000_000_000 },
        ],
      };
      expect((await k.http.post("/api/v1/pollers/dc2-a/heartbeat").set(bearer(admin)).send({ telemetry })).status).toBe(200);
      const res = await k.http.get("/api/v1/system/hosts").set(bearer(viewer));
      expect(res.body.hosts).toHaveLength(2);
      expectCoreEntry(res.body.hosts[0]);
      // An older poller sends no counters: {}.
      expect(res.body.hosts[1]).toEqual({
        instance: "dc2-a",
        role: "poller",
        online: true,
        pool: "dc2",
        ...telemetry,
        mem_used_pct: 25,
        disk_used_pct: 90,
        counters: {},
      });
      const counters = { events_forward_lost: 12, flows_lost: 0 };
      expect(
        (
          await k.http
            .post("/api/v1/pollers/dc2-a/heartbeat")
            .set(bearer(admin))
            .send({ telemetry: { ...telemetry, counters } })
        ).status,
      ).toBe(200);
      expect((await k.http.get("/api/v1/system/hosts").set(bearer(viewer))).body.hosts[1].counters).toEqual(counters);
      for (const bad of [{ "Not-A-Name": 1 }, { events_forward_lost: -1 }, { events_forward_lost: 1.5 }, { events_forward_lost: "12" }]) {
        expectError(
          await k.http
            .post("/api/v1/pollers/dc2-a/heartbeat")
            .set(bearer(admin))
            .send({ telemetry: { ...telemetry, counters: bad } }),
          400,
          "validation_failed",
        );
      }

      await rawQuery(k.databaseUrl!, "UPDATE polling.pollers SET online = false WHERE id = 'dc2-a'");
      const later = await k.http.get("/api/v1/system/hosts").set(bearer(viewer));
      expect(later.body.hosts[1]).toMatchObject({ instance: "dc2-a", online: false, cpu_pct: 37.5 });
    });
  });

  it("answers the core's host counters that plugins registered; a reader that throws is left out", async () => {
    const counters = k.context("polling").get(HostCounterRegistry);
    let n = 0;
    counters.register("test_received_lost", () => n);
    counters.register("test_broken", () => {
      throw new Error("broken reader");
    });
    expect(() => counters.register("Bad Name", () => 0)).toThrow(/must match/);
    n = 7;
    const core = (await k.http.get("/api/v1/system/hosts").set(bearer(viewer))).body.hosts[0];
    expect(core.counters).toEqual({ test_received_lost: 7 });
  });

  describe("GET /monitoring-gaps", () => {
    afterEach(() => rawQuery(k.databaseUrl!, "DELETE FROM polling.monitoring_gaps"));

    it("needs a token; answers the gaps newest first in the spec's shape", async () => {
      expectError(await k.http.get("/api/v1/monitoring-gaps"), 401, "unauthorized");
      await rawQuery(
        k.databaseUrl!,
        `INSERT INTO polling.monitoring_gaps (poller_id, pool, started_at, ended_at, recorded_at, listeners) VALUES
           ('p-old', 'east', '2026-01-01T00:00:00Z', '2026-01-01T00:10:00Z', '2026-01-01T00:10:00Z', '{}'),
           ('p-new', 'west', '2026-02-01T10:00:00.250Z', '2026-02-01T10:01:30.750Z', '2026-02-01T10:01:31Z', '{syslog/udp:514}')`,
      );
      const res = await k.http.get("/api/v1/monitoring-gaps").set(bearer(viewer));
      expect(res.status).toBe(200);
      expect(res.body).toEqual([
        {
          id: expect.stringMatching(UUID),
          poller_id: "p-new",
          pool: "west",
          started_at: "2026-02-01T10:00:00.250000Z",
          ended_at: "2026-02-01T10:01:30.750000Z",
          recorded_at: "2026-02-01T10:01:31.000000Z",
          duration_secs: 90,
          listeners: ["syslog/udp:514"],
        },
        {
          id: expect.stringMatching(UUID),
          poller_id: "p-old",
          pool: "east",
          started_at: "2026-01-01T00:00:00.000000Z",
          ended_at: "2026-01-01T00:10:00.000000Z",
          recorded_at: expect.stringMatching(RFC3339),
          duration_secs: 600,
          listeners: [],
        },
      ]);
    });

    it(`answers at most ${GAP_LIST_CAP}, the newest`, async () => {
      await rawQuery(
        k.databaseUrl!,
        `INSERT INTO polling.monitoring_gaps (poller_id, pool, started_at, ended_at, recorded_at)
         SELECT 'p' || i, 'bulk', now() - interval '1 hour', now(), now() - i * interval '1 second' FROM generate_series(1, ${GAP_LIST_CAP + 50}) i`,
      );
      const res = await k.http.get("/api/v1/monitoring-gaps").set(bearer(viewer));
      expect(res.body).toHaveLength(GAP_LIST_CAP);
      expect(res.body[0].poller_id).toBe("p1");
      expect(res.body[GAP_LIST_CAP - 1].poller_id).toBe(`p${GAP_LIST_CAP}`);
    });

    it("degrades a read error to an empty list", async () => {
      await rawQuery(k.databaseUrl!, "INSERT INTO polling.monitoring_gaps (poller_id, pool, started_at, ended_at) VALUES ('p', 'x', now(), now())");
      await rawQuery(k.databaseUrl!, "ALTER TABLE polling.monitoring_gaps RENAME TO monitoring_gaps_away");
      try {
        const res = await k.http.get("/api/v1/monitoring-gaps").set(bearer(viewer));
        expect(res.status).toBe(200);
        expect(res.body).toEqual([]);
      } finally {
        await rawQuery(k.databaseUrl!, "ALTER TABLE polling.monitoring_gaps_away RENAME TO monitoring_gaps");
      }
      expect((await k.http.get("/api/v1/monitoring-gaps").set(bearer(viewer))).body).toHaveLength(1);
    });
  });
});

describe("skeleton mode", () => {
  let k: TestKernel;
  beforeAll(async () => {
    k = await startTestKernel({ skeleton: true, plugins: [inventoryPlugin, pollingPlugin] });
  });
  afterAll(() => k?.stop());

  it("answers the hosts list with just the core, measured", async () => {
    const res = await k.http.get("/api/v1/system/hosts").set(bearer(k.adminToken));
    expect(res.status).toBe(200);
    expect(res.body.hosts).toHaveLength(1);
    expectCoreEntry(res.body.hosts[0]);
    expectError(await k.http.get("/api/v1/system/hosts"), 401, "unauthorized");
  });

  it("answers 503 for the gaps (no durable poller store) and for the pollers' routes", async () => {
    expectError(await k.http.get("/api/v1/monitoring-gaps").set(bearer(k.adminToken)), 503, "store_unavailable");
    expectError(await k.http.post("/api/v1/pollers/register").set(bearer(k.adminToken)).send({ poller_id: "p", pool: "x" }), 503, "store_unavailable");
    expectError(await k.http.get("/api/v1/pollers").set(bearer(k.adminToken)), 503, "store_unavailable");
  });
});
