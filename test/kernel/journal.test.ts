/**
 * The ingest journal (core/journal/Journal.ts): records come back in order with their offsets and timestamps across
 * segments and reopenings; a reader starts anywhere (through the sparse index); a torn tail is cut; commits free whole
 * segments and survive a restart; the size and age bounds drop the oldest segments and count exactly what was
 * unprocessed; a process killed with SIGKILL right after appending loses nothing it appended.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Journal, RECORD_HEADER_BYTES, type JournalRecord } from "../../core/journal/Journal.js";
import { JournalPart, journalDirs } from "../../core/journal/JournalPart.js";

const root = mkdtempSync(join(tmpdir(), "nms-journal-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `j${++n}`);

const payload = (i: number, size = 40) => Buffer.from(`message ${i} `.padEnd(size, "x"));

/** Reads everything from `from` to the end. */
function readAll(j: Journal, from?: number, batch = 1000): { offset: number; ts: number; text: string }[] {
  const r = j.reader(from);
  const out: { offset: number; ts: number; text: string }[] = [];
  for (let got: JournalRecord[]; (got = r.next(batch)).length > 0;) for (const x of got) out.push({ offset: x.offset, ts: x.ts, text: x.payload.toString() });
  r.close();
  return out;
}

const segmentFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".log"));

test("records come back in order with consecutive offsets and their timestamps, across segments", () => {
  const j = Journal.open({ dir: freshDir(), segmentBytes: 64 * 1024, fsync: "never" });
  let expected = 0;
  for (let b = 0; b < 100; b++) {
    const payloads = Array.from({ length: 50 }, (_, i) => payload(b * 50 + i, 30 + ((b * 50 + i) % 200)));
    const first = j.append(
      payloads,
      payloads.map((_, i) => 1_700_000_000_000 + b * 50 + i + 0.5),
    );
    expect(first).toBe(expected);
    expected += 50;
  }
  expect(j.nextOffset).toBe(5000);
  expect(segmentFiles(j.dir).length).toBeGreaterThan(3);
  const all = readAll(j, 0, 333);
  expect(all).toHaveLength(5000);
  all.forEach((r, i) => {
    expect(r.offset).toBe(i);
    expect(r.ts).toBe(1_700_000_000_000 + i + 0.5);
    expect(r.text).toBe(payload(i, 30 + (i % 200)).toString());
  });
  j.close();
});

test("a reader follows the writer: nothing at the end, then what is appended after", () => {
  const j = Journal.open({ dir: freshDir(), segmentBytes: 64 * 1024, fsync: "never" });
  const r = j.reader(0);
  expect(r.next(10)).toEqual([]);
  j.append([payload(0), payload(1)], 1);
  expect(r.next(10).map((x) => x.offset)).toEqual([0, 1]);
  expect(r.next(10)).toEqual([]);
  // Enough to roll into new segments while the reader holds the old one open.
  for (let i = 2; i < 4000; i++) j.append([payload(i, 100)], i);
  const seen: number[] = [];
  for (let got: JournalRecord[]; (got = r.next(97)).length > 0;) seen.push(...got.map((x) => x.offset));
  expect(seen).toEqual(Array.from({ length: 3998 }, (_, i) => i + 2));
  r.close();
  j.close();
});

test("reopened, it keeps its id, records and offsets, and a reader starts at any offset through the index", () => {
  const dir = freshDir();
  const j = Journal.open({ dir, segmentBytes: 4 * 1024 * 1024, fsync: "interval" });
  for (let b = 0; b < 40; b++)
    j.append(
      Array.from({ length: 500 }, (_, i) => payload(b * 500 + i, 120)),
      b,
    );
  const id = j.id;
  j.close();
  // 20,000 records of 136 bytes (2.7 MB): one segment with index entries every 256 KiB.
  expect(statSync(join(dir, "00000000000000000000.idx")).size).toBeGreaterThanOrEqual(8 * 9);
  const again = Journal.open({ dir, segmentBytes: 4 * 1024 * 1024, fsync: "interval" });
  expect(again.id).toBe(id);
  expect(again.nextOffset).toBe(20_000);
  for (const from of [0, 1, 1927, 9999, 15_000, 19_999]) {
    const got = again.reader(from).next(3);
    expect(got[0].offset).toBe(from);
    expect(got[0].payload.toString()).toBe(payload(from, 120).toString());
  }
  expect(again.append([payload(20_000, 120)], 0)).toBe(20_000);
  expect(readAll(again, 19_999).map((r) => r.offset)).toEqual([19_999, 20_000]);
  again.close();
});

test("a torn record at the tail (a crash inside a write) is cut off when the journal is opened again", () => {
  const dir = freshDir();
  const j = Journal.open({ dir, fsync: "never" });
  j.append([payload(0), payload(1), payload(2)], 7);
  j.close();
  const file = join(dir, "00000000000000000000.log");
  const whole = statSync(file).size;
  // A header that promises 100 bytes followed by 10 of them; then a second variant: a complete record with a bad CRC.
  const torn = Buffer.alloc(RECORD_HEADER_BYTES + 10);
  torn.writeUInt32BE(100, 0);
  appendFileSync(file, torn);
  let again = Journal.open({ dir, fsync: "never" });
  expect(again.nextOffset).toBe(3);
  expect(statSync(file).size).toBe(whole);
  again.close();
  const bad = Buffer.alloc(RECORD_HEADER_BYTES + 5);
  bad.writeUInt32BE(5, 0);
  bad.writeUInt32BE(12345, 4);
  appendFileSync(file, bad);
  again = Journal.open({ dir, fsync: "never" });
  expect(again.nextOffset).toBe(3);
  expect(again.append([payload(3)], 8)).toBe(3);
  expect(readAll(again).map((r) => r.text)).toEqual([0, 1, 2, 3].map((i) => payload(i).toString()));
  again.close();
});

test("commits free the segments wholly below them and survive a restart", () => {
  const dir = freshDir();
  const j = Journal.open({ dir, segmentBytes: 64 * 1024, fsync: "never" });
  for (let i = 0; i < 3000; i++) j.append([payload(i, 100)], i);
  const before = segmentFiles(dir).length;
  j.commit(1500);
  const after = segmentFiles(dir).length;
  expect(after).toBeLessThan(before);
  expect(j.firstOffset).toBeLessThanOrEqual(1500);
  expect(j.committed).toBe(1500);
  j.close();
  const again = Journal.open({ dir, segmentBytes: 64 * 1024, fsync: "never" });
  expect(again.committed).toBe(1500);
  // The default reader starts at the committed offset.
  const rest = readAll(again);
  expect(rest[0].offset).toBe(1500);
  expect(rest).toHaveLength(1500);
  // Everything committed: only the segment being written stays.
  again.commit(3000);
  expect(segmentFiles(dir)).toHaveLength(1);
  again.close();
});

test("the size bound drops the oldest segments and counts exactly the unprocessed records they held", () => {
  const dir = freshDir();
  const drops: [number, string][] = [];
  // 64 KiB segments, 256 KiB in all; records of 16 + 112 = 128 bytes: 512 a segment.
  const j = Journal.open({ dir, segmentBytes: 64 * 1024, maxBytes: 256 * 1024, fsync: "never", onDrop: (k, why) => drops.push([k, why]) });
  for (let i = 0; i < 600; i++) j.append([payload(i, 112)], i);
  j.commit(600); // the first 600 were processed: nothing of them counts as lost
  const reader = j.reader(600);
  for (let i = 600; i < 5000; i++) j.append([payload(i, 112)], i);
  const s = j.stats();
  expect(s.bytes).toBeLessThanOrEqual(256 * 1024);
  expect(s.firstOffset).toBeGreaterThan(600);
  // Lost: from the committed 600 up to the oldest record still held.
  expect(s.dropped).toBe(s.firstOffset - 600);
  expect(drops.reduce((a, [k]) => a + k, 0)).toBe(s.dropped);
  expect(drops.every(([, why]) => why === "size")).toBe(true);
  // A reader left behind jumps to what is held and says how much it skipped.
  const got = reader.next(5);
  expect(got[0].offset).toBe(s.firstOffset);
  expect(reader.skipped).toBe(s.dropped);
  // The service goes on appending.
  expect(j.append([payload(5000, 112)], 1)).toBe(5000);
  j.close();
});

test("the age bound drops closed segments older than maxAgeMs, never the one being written", () => {
  const dir = freshDir();
  const drops: [number, string][] = [];
  const j = Journal.open({ dir, segmentBytes: 64 * 1024, maxAgeMs: 60_000, fsync: "never", onDrop: (k, why) => drops.push([k, why]) });
  for (let i = 0; i < 2000; i++) j.append([payload(i, 112)], 1_000_000 + i);
  const segments = j.stats().segments;
  expect(segments).toBeGreaterThan(2);
  j.enforceAge(1_000_000 + 500 + 59_000); // the first segment ends near record 511: not yet 60 s old
  expect(j.stats().segments).toBe(segments);
  j.enforceAge(Date.now() + 3_600_000);
  expect(j.stats().segments).toBe(1);
  expect(drops.every(([, why]) => why === "age")).toBe(true);
  expect(j.stats().dropped).toBe(j.firstOffset);
  j.close();
});

test("appendFramed fills the headers of records laid out in place", () => {
  const j = Journal.open({ dir: freshDir(), fsync: "always" });
  const parts = ["alpha", "", "gamma delta"];
  const buf = Buffer.alloc(parts.reduce((a, p) => a + RECORD_HEADER_BYTES + Buffer.byteLength(p), 0));
  let at = 0;
  for (const p of parts) {
    buf.writeUInt32BE(Buffer.byteLength(p), at);
    buf.write(p, at + RECORD_HEADER_BYTES);
    at += RECORD_HEADER_BYTES + Buffer.byteLength(p);
  }
  expect(j.append([payload(0)], 5)).toBe(0);
  expect(j.appendFramed(buf, buf.length, parts.length, 1234.5)).toBe(1);
  const all = readAll(j);
  expect(all.map((r) => r.text)).toEqual([payload(0).toString(), ...parts]);
  expect(all.slice(1).map((r) => r.ts)).toEqual([1234.5, 1234.5, 1234.5]);
  j.close();
  // The CRCs it wrote are the ones a reopening checks.
  expect(Journal.open({ dir: j.dir }).nextOffset).toBe(4);
});

test("what was appended survives the process being killed with SIGKILL right after (whatever the fsync policy)", () => {
  const dir = freshDir();
  const module = join(process.cwd(), "dist/core/journal/Journal.js");
  const script = `
    const { Journal } = await import(${JSON.stringify(module)});
    const j = Journal.open({ dir: ${JSON.stringify(dir)}, fsync: "never", segmentBytes: 256 * 1024 });
    for (let i = 0; i < 20000; i++) j.append([Buffer.from("killed " + i)], i);
    process.kill(process.pid, "SIGKILL");
  `;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(res.signal).toBe("SIGKILL");
  const j = Journal.open({ dir });
  expect(j.nextOffset).toBe(20_000);
  const all = readAll(j);
  expect(all).toHaveLength(20_000);
  expect(all[19_999].text).toBe("killed 19999");
  // Nothing was committed: a consumer starts from the first record.
  expect(j.committed).toBe(0);
  j.close();
});

test("a checkpoint file with garbage, or none, starts the journal at its oldest record", () => {
  const dir = freshDir();
  const j = Journal.open({ dir });
  j.append([payload(0), payload(1)], 0);
  j.commit(1);
  j.close();
  expect(readFileSync(join(dir, "checkpoint"), "utf8").trim()).toBe("1");
  writeFileSync(join(dir, "checkpoint"), "not a number");
  const again = Journal.open({ dir });
  expect(again.committed).toBe(0);
  expect(readAll(again)).toHaveLength(2);
  again.close();
});

test("a caught-up reader moves past records its writer processes from its own copy, within a segment and across a new one", () => {
  const j = Journal.open({ dir: freshDir(), segmentBytes: 4096, fsync: "never" });
  const r = j.reader(0);
  const framed = (from: number, count: number) => {
    const parts = Array.from({ length: count }, (_, i) => payload(from + i, 100));
    const buf = Buffer.alloc(parts.reduce((n, p) => n + RECORD_HEADER_BYTES + p.length, 0));
    let at = 0;
    for (const p of parts) {
      buf.writeUInt32BE(p.length, at);
      p.copy(buf, at + RECORD_HEADER_BYTES);
      at += RECORD_HEADER_BYTES + p.length;
    }
    return buf;
  };
  let next = 0;
  // 10 batches of 8 records of 116 bytes: segments of 4 KiB roll every few batches; every batch is skipped by the reader.
  for (let b = 0; b < 10; b++) {
    const buf = framed(next, 8);
    const first = j.appendFramed(buf, buf.length, 8, 1_700_000_000_000);
    expect(first).toBe(next);
    expect(r.skipAppended(first, 8, buf.length)).toBe(true);
    next += 8;
  }
  expect(r.nextOffset).toBe(80);
  expect(r.next(100)).toEqual([]);
  // A reader that is behind is refused (it reads them), and then reads exactly what follows.
  const buf = framed(next, 3);
  const first = j.appendFramed(buf, buf.length, 3, 1_700_000_000_001);
  expect(r.skipAppended(first + 1, 2, buf.length)).toBe(false);
  expect(r.next(100).map((x) => x.payload.toString())).toEqual([80, 81, 82].map((i) => payload(i, 100).toString()));
  r.close();
  j.close();
});

test("a journal part skips what PostgreSQL holds and commits the ranges handed over in order, whatever order they are stored in", () => {
  const dir = freshDir();
  const part = new JournalPart(0, { dir, fsync: "never" });
  part.journal.append(
    Array.from({ length: 10 }, (_, i) => payload(i)),
    1,
  );
  part.resume([
    [2, 4],
    [6, 7],
  ]);
  expect([...Array(10).keys()].filter((i) => part.isStored(i))).toEqual([2, 3, 6]);
  part.handOver(0, 4);
  part.handOver(4, 5, true); // nothing to store in it
  part.handOver(5, 10);
  expect(part.inFlight).toBe(9);
  part.stored(5);
  expect(part.journal.committed).toBe(0); // the first range is not stored yet
  part.stored(0);
  expect(part.journal.committed).toBe(10);
  expect(part.inFlight).toBe(0);
  expect(part.state()).toMatchObject({ partition: 0, committed: 10, next: 10 });
  part.close();
});

test("a worker reads its own journal and those of a larger worker count before", () => {
  const root = freshDir();
  for (const k of [0, 1, 2, 3, 4]) mkdirSync(join(root, `syslog-${k}`), { recursive: true });
  mkdirSync(join(root, "flows-7"));
  expect(journalDirs(root, "syslog", 0, 2)).toEqual([0, 2, 4].map((k) => join(root, `syslog-${k}`)));
  expect(journalDirs(root, "syslog", 1, 2)).toEqual([1, 3].map((k) => join(root, `syslog-${k}`)));
  expect(journalDirs(root, "flows", 1, 2)).toEqual([1, 7].map((k) => join(root, `flows-${k}`)));
  expect(journalDirs(join(root, "none"), "flows", 0, 4)).toEqual([join(root, "none", "flows-0")]);
});
