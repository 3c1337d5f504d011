/**
 * The pipeline bounds memory however slow the store is, and loses nothing it accepted: while PostgreSQL holds the
 * writes (a lock on the events table here), what the receivers on the main thread take (traps, HTTP ingest,
 * forwarded events) is appended to the queue journal and at most about `queueSize` events are read back into memory;
 * the rest waits on disk. Once the store moves again, everything accepted is written once and flush() resolves only then.
 */
import pg from "pg";
import { sampleValue, scrape } from "../../../test/metrics/exposition.js";
import { startTestKernel, type TestKernel } from "../../../test/support/testKernel.js";
import { alertsPlugin } from "../../alerts/index.js";
import { inventoryPlugin } from "../../inventory/index.js";
import { pollingPlugin } from "../../polling/index.js";
import { eventsPlugin } from "../index.js";
import type { Inbound } from "../lib/types.js";
import { EventPipeline } from "../services/EventPipeline.js";
import { parseSyslog } from "../syslog/parse.js";

const QUEUE = 1000;
const BATCH = 100;

let k: TestKernel;
let pipeline: EventPipeline;
let db: pg.Client;

const inbound = (n: number): Inbound => {
  const bytes = Buffer.from(`<134>1 2026-11-24T12:00:00Z host app - - - queue test ${n}`);
  const now = Date.now();
  const r = parseSyslog(bytes, now);
  if (!r.ok) throw new Error("the test message does not parse");
  return {
    kind: "syslog",
    transport: "udp",
    listener: "syslog.udp",
    source_ip: "127.0.0.9",
    received_at_ms: now,
    syslog: r.msg,
    trap: null,
    raw: null,
    malformed: false,
    bytes,
  };
};

const stored = async () => Number((await db.query("SELECT count(*) AS n FROM events.events WHERE message LIKE 'queue test %'")).rows[0].n);

beforeAll(async () => {
  k = await startTestKernel({
    plugins: [inventoryPlugin, pollingPlugin, alertsPlugin, eventsPlugin],
    overrides: {
      pluginConfig: {
        // The UDP listener is bound so the metrics report its queue_full drops (the events below come in under its name).
        events: {
          syslog: { udp: 0, tcp: null, tls: null, bindAddress: "127.0.0.1" },
          traps: { udp: null },
          queueSize: QUEUE,
          batchSize: BATCH,
          flushMs: 10,
        },
      },
    },
  });
  pipeline = k.context("events").get(EventPipeline);
  db = new pg.Client({ connectionString: k.databaseUrl! });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await k?.stop();
});

test("a slow store: queueSize events in memory, the rest in the journal, none refused, and all of them written once after", async () => {
  const before = pipeline.stats();
  const journal0 = pipeline.queueJournalStats()!;
  // The store stops taking events: an insert waits for this lock.
  await db.query("BEGIN");
  await db.query("LOCK TABLE events.events IN SHARE MODE");
  let refused = 0;
  // 1500 events over 15 turns: the flush timer runs between them (a write could start on each turn).
  for (let turn = 0; turn < 15; turn++) {
    for (let i = 0; i < 100; i++) if (!pipeline.accept(inbound(turn * 100 + i))) refused++;
    await new Promise((r) => setTimeout(r, 25));
  }
  const during = pipeline.stats();
  const journal = pipeline.queueJournalStats()!;
  expect(refused).toBe(0);
  expect(during.dropped_queue_full).toBe(before.dropped_queue_full);
  // All of it journaled and unstored; in memory (batches in flight and waiting) at most queueSize and a read's worth.
  expect(journal.backlog - journal0.backlog).toBe(1500);
  expect(during.queued).toBeGreaterThan(0);
  expect(during.queued).toBeLessThanOrEqual(QUEUE + BATCH);
  expect(during.written).toBe(before.written);
  // Reported with the core's host telemetry and by the metrics.
  const hosts = (await k.request("GET", "/system/hosts")).body as { hosts: { instance: string; counters: Record<string, number> }[] };
  expect(hosts.hosts.find((h) => h.instance === "core")?.counters).toEqual({
    events_queue_dropped: 0,
    events_journal_dropped: 0,
    events_journal_backlog: journal.backlog,
  });
  const metrics = await scrape(k.url);
  expect(sampleValue(metrics, "nms_events_dropped_total", { listener: "syslog.udp", reason: "queue_full" })).toBe(0);
  expect(sampleValue(metrics, "nms_events_journal_backlog")).toBe(journal.backlog);

  let flushed = false;
  const flush = pipeline.flush().then(() => (flushed = true));
  await new Promise((r) => setTimeout(r, 100));
  expect(flushed).toBe(false);
  await db.query("COMMIT");
  await flush;
  const after = pipeline.stats();
  expect(after.queued).toBe(0);
  expect(after.written - before.written).toBe(1500);
  expect(await stored()).toBe(1500);
  expect(pipeline.queueJournalStats()!.backlog).toBe(0);
});

test("flush() with nothing queued resolves at once, and a flush waits for the writes already in flight", async () => {
  await pipeline.flush();
  const before = await stored();
  for (let i = 0; i < 2 * BATCH + 17; i++) pipeline.accept(inbound(10_000 + i));
  await pipeline.flush();
  expect(await stored()).toBe(before + 2 * BATCH + 17);
  expect(pipeline.stats().queued).toBe(0);
});

test("a live publish that throws is logged; the batch is stored once and not written again", async () => {
  const live = (pipeline as unknown as { live: unknown }).live;
  (pipeline as unknown as { live: unknown }).live = () => {
    throw new Error("live channel broken");
  };
  try {
    const before = pipeline.stats();
    const stored0 = await stored();
    for (let i = 0; i < 10; i++) pipeline.accept(inbound(20_000 + i));
    await pipeline.flush();
    const after = pipeline.stats();
    expect(after.written - before.written).toBe(10);
    expect(after.write_failures).toBe(before.write_failures);
    expect(await stored()).toBe(stored0 + 10);
    expect(k.logs.some((l) => l.includes("events: live publish failed"))).toBe(true);
  } finally {
    (pipeline as unknown as { live: unknown }).live = live;
  }
});
