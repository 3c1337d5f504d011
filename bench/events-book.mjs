// What keeping the ingest parsers' copy of the node address book current costs (`node bench/events-book.mjs`): a whole
// copy (what every re-read of the book sent each parser before 2026-11-29) against a patch of one changed address (what
// a node's create, move or delete sends now), at BENCH_NODES nodes (default 3000,50000). The main thread builds the
// message and posts it to a worker thread that takes it in as the parser does (a new Map, or the patch applied); the
// worker's time is its message handler's (the map ready; deserialising the message comes before it, on top). Medians of
// BENCH_ROUNDS (default 15).
// Prints events_book_copy_main_ms_<n>, events_book_copy_parser_ms_<n>, events_book_patch_main_ms_<n>,
// events_book_patch_parser_ms_<n>.
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";

const SIZES = (process.env.BENCH_NODES ?? "3000,50000").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const print = (k, v) => console.log(`${k}=${v}`);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const PARSER = `
const { parentPort } = require("node:worker_threads");
let book = new Map();
parentPort.on("message", (m) => {
  const t = performance.now();
  if (m.book) book = new Map(m.book);
  for (const [address, node] of m.bookPatch ?? []) { if (node) book.set(address, node); else book.delete(address); }
  parentPort.postMessage({ ms: performance.now() - t, size: book.size });
});`;

for (const n of SIZES) {
  const folders = [randomUUID(), randomUUID()];
  const nodes = new Map();
  for (let i = 0; i < n; i++)
    nodes.set(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, { id: randomUUID(), name: `node-${i}`, folder_path: folders, pool: "default" });
  const worker = new Worker(PARSER, { eval: true });
  const ask = (message) =>
    new Promise((resolve) => {
      worker.once("message", resolve);
      worker.postMessage(message);
    });
  const copy = { main: [], parser: [] };
  const patch = { main: [], parser: [] };
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    // As EventPipeline.bookEntries did: the entries of the embedded pool, mapped to what the parser keeps.
    const entries = [...new Map(nodes)].map(([address, x]) => [address, { id: x.id, folder_path: x.folder_path }]);
    let answer = ask({ book: entries });
    copy.main.push(performance.now() - t);
    copy.parser.push((await answer).ms);
    t = performance.now();
    const address = `10.0.0.${r % 200}`;
    const x = nodes.get(address);
    answer = ask({ bookPatch: [[address, x ? { id: x.id, folder_path: x.folder_path } : null]] });
    patch.main.push(performance.now() - t);
    patch.parser.push((await answer).ms);
  }
  await worker.terminate();
  print(`events_book_copy_main_ms_${n}`, median(copy.main).toFixed(3));
  print(`events_book_copy_parser_ms_${n}`, median(copy.parser).toFixed(3));
  print(`events_book_patch_main_ms_${n}`, median(patch.main).toFixed(3));
  print(`events_book_patch_parser_ms_${n}`, median(patch.parser).toFixed(3));
}
