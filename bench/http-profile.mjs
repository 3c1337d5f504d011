/* global fetch */
// The service's CPU per request on the hot read routes, one route class at a time, and where it goes
// (`node bench/http-profile.mjs`; needs `npm run build` first).
//
// The data of bench/http-load.mjs (bench/lib/http-seed.mjs; BENCH_NODES, BENCH_HISTORY_ROWS) plus BENCH_EVENTS (default
// 5000) events. Each class (BENCH_CLASSES, default every one below) runs alone for BENCH_CLASS_SECS (default 15) at
// BENCH_CONNECTIONS (default 20) after a 3-s warm-up, and prints the service's CPU ms per request from /proc; the classes
// the reference server answers (bench/lib/http-reference.mjs) run against it too, for the ratio of CPU per request.
// BENCH_AB=1 also starts a second service on the same database with the compiled JSON mapping of FastJson routes
// switched off (bench/lib/generic-json.mjs: every answer through Ts.ED's json-mapper, as before it) and measures the two
// alternately, BENCH_ROUNDS (default 3) times per class, printing each side's median: the machine's other load then
// weighs on both alike.
// BENCH_BASE_ROOT=<folder> (with BENCH_AB=1) makes the second service another build instead: that folder's dist/ (an
// earlier commit's `git archive`, built there with node_modules linked), so two commits are measured alternately on
// one database; its answers are checked byte for byte against this build's.
// BENCH_PROFILE=1 starts the service with `--cpu-prof` (into BENCH_PROFILE_DIR, default a temporary folder) and prints
// the profile's top frames by self time and the inclusive share of the frames that matter here (the json-mapper,
// JSON.stringify, ETag, pg parsing, socket writes, the auth guard).
import autocannon from "autocannon";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { benchStore, bootKernel, load, print, QUIET_KERNEL_ENV, ROOT } from "./lib/kernel.mjs";
import { seedHttpLoad } from "./lib/http-seed.mjs";
import { procCpuSecs } from "./lib/flows-peers.mjs";
import { startReference } from "./lib/http-reference-process.mjs";

const SECS = Number(process.env.BENCH_CLASS_SECS ?? 15);
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const PROFILE = process.env.BENCH_PROFILE === "1";
const AB = process.env.BENCH_AB === "1";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (AB ? 3 : 1));
const CLASSES = {
  read_nodes: { path: "/api/v1/nodes?limit=100", reference: true },
  read_alert_history: { path: "/api/v1/alerts/history?limit=100", reference: true },
  read_events: { path: "/api/v1/events?limit=100", reference: false },
  read_interface_top: { path: "/api/v1/metrics/interface-top?metric=throughput&limit=10", reference: true },
  // The other lists (not in the mix): open alerts (BENCH_ACTIVE, default 300 seeded), the latest transitions, event statistics.
  read_active_alerts: { path: "/api/v1/alerts", reference: false },
  read_transitions: { path: "/api/v1/alerts/transitions?limit=100", reference: false },
  read_event_stats: { path: "/api/v1/events/stats?group_by=time&split=kind", reference: false },
};
const only = process.env.BENCH_CLASSES?.split(",");

const token = randomBytes(24).toString("hex");

const cannon = (url, path, headers, connections, duration) =>
  new Promise((resolve, reject) => {
    const inst = autocannon({ url: `${url}${path}`, connections, duration, headers, timeout: 30 }, (err, res) => (err ? reject(err) : resolve(res)));
    inst.on("error", reject);
  });

/** Requests/s and CPU ms per request of process `pid` for `secs` of load on one route. */
async function measure(url, path, headers, pid) {
  await cannon(url, path, headers, Math.max(1, CONNS >> 2), 3);
  const c0 = procCpuSecs(pid);
  const r = await cannon(url, path, headers, CONNS, SECS);
  const cpu = procCpuSecs(pid) - c0;
  return { rps: r.requests.average, n: r.requests.total, non2xx: r.non2xx, errors: r.errors + r.timeouts, cpuMs: (cpu * 1000) / Math.max(1, r.requests.total) };
}

/**
 * Top self-time frames and the top inclusive frames of the service's main thread: the largest .cpuprofile in `dir` (worker
 * threads, the module loader's among them, write their own, smaller ones), or BENCH_PROFILE_FILE.
 */
export function summarise(dir) {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  if (!files.length) return print("http_profile", "no profile written");
  const file = process.env.BENCH_PROFILE_FILE ?? files.map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
  const prof = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (f) => `${f.functionName || "(anonymous)"} (${f.url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${f.lineNumber + 1})`;
  const self = new Map();
  const incl = new Map();
  let total = 0;
  let idle = 0;
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0;
    const f = byId.get(id).callFrame;
    total += dt;
    if (f.functionName === "(idle)") idle += dt;
    self.set(label(f), (self.get(label(f)) ?? 0) + dt);
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const k = label(byId.get(n).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  });
  const busy = total - idle;
  print("http_profile_file", `${file} total_ms=${Math.round(total / 1000)} busy_ms=${Math.round(busy / 1000)} (shares below are of busy time)`);
  const pct = (v) => `${((v / busy) * 100).toFixed(1)}%`;
  for (const [k, v] of [...self]
    .filter(([k]) => !k.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30))
    print("self", `${pct(v)} ${k}`);
  const top = [...incl].sort((a, b) => b[1] - a[1]).filter(([k]) => !/^\((root|program|idle|garbage collector)\)/.test(k));
  for (const [k, v] of top.slice(0, 60)) print("inclusive", `${pct(v)} ${k}`);
  const gc = [...self].filter(([k]) => k.startsWith("(garbage collector)")).reduce((s, [, v]) => s + v, 0);
  print("gc", pct(gc));
}

async function main({ dataDir, database, cleanup }) {
  print("http_profile_load", load());
  const dbUrl = await database();
  const profDir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(join(tmpdir(), "nms-httpprof-"));
  const kernel = await bootKernel({
    NMS_DATA_DIR: join(dataDir, "kernel"),
    NMS_DATABASE_URL: dbUrl,
    NMS_BOOTSTRAP_TOKEN: token,
    ...QUIET_KERNEL_ENV,
    ...(PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {}),
  });
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  let reference = null;
  let generic = null;
  try {
    await seedHttpLoad(db, { nodes: Number(process.env.BENCH_NODES ?? 3000), history: Number(process.env.BENCH_HISTORY_ROWS ?? 200_000) });
    // Events of the last hour on the seeded nodes (the list's first page reads the newest): nulls, unicode and data.
    await db.query(
      `INSERT INTO events.events (id, received_at, kind, transport, listener, source_ip, node_id, folder_path, severity, facility, host, app, msgid,
                                  message, trap_oid, data, raw, malformed, action)
       SELECT gen_random_uuid(), now() - g * interval '500 ms', CASE WHEN g % 5 = 0 THEN 'trap' ELSE 'syslog' END, 'udp', 'default',
              ('10.1.' || (g % 250) || '.' || (g % 200 + 1))::inet, CASE WHEN g % 3 = 0 THEN NULL ELSE n.id END, '{}', g % 8, CASE WHEN g % 5 = 0 THEN NULL ELSE g % 24 END,
              'host-' || g, CASE WHEN g % 2 = 0 THEN 'sshd' END, NULL, 'Interface Gi0/' || (g % 48) || ' changed state to down — ünïcödé ' || g,
              CASE WHEN g % 5 = 0 THEN '1.3.6.1.6.3.1.1.5.3' END, CASE WHEN g % 5 = 0 THEN jsonb_build_object('ifIndex', g % 48) END,
              CASE WHEN g % 7 = 0 THEN '<13>raw ' || g END, false, 'stored'
         FROM generate_series(1, $1) g
         JOIN LATERAL (SELECT id FROM inventory.nodes OFFSET (g % 100) LIMIT 1) n ON true`,
      [EVENTS],
    );
    // Open incidents on the first nodes: ports and node-level, some acknowledged.
    await db.query(
      `INSERT INTO alerts.active_alerts (incident_key, subject_kind, node_id, subject_name, check_id, metric, ifindex, if_name, row_key, row_name,
                                         severity, state, direction, observed_value, threshold_value, title, fired_at)
       SELECT n.id || ':bench:' || g, 'node', n.id, NULL, gen_random_uuid(), CASE WHEN g % 2 = 0 THEN 'if_in_util_pct' ELSE 'cpu_util' END,
              CASE WHEN g % 2 = 0 THEN g % 48 END, CASE WHEN g % 2 = 0 THEN 'Gi0/' || (g % 48) END, NULL, NULL,
              (ARRAY['info', 'warning', 'critical'])[1 + g % 3], (ARRAY['warning', 'warning', 'critical'])[1 + g % 3], 'above', 95, 90,
              'Utilisation above 90 — ' || g, now() - g * interval '1 minute'
         FROM generate_series(1, $1) g
         JOIN LATERAL (SELECT id FROM inventory.nodes OFFSET (g % 500) LIMIT 1) n ON true`,
      [Number(process.env.BENCH_ACTIVE ?? 300)],
    );
    await db.query(
      `INSERT INTO alerts.acks (incident_key, severity, node_id, acked_by, note)
       SELECT incident_key, severity, node_id, 'ops', CASE WHEN random() < 0.5 THEN 'looking' END FROM alerts.active_alerts WHERE random() < 0.3`,
    );
    await db.query("ANALYZE");
    reference = await startReference(dbUrl);
    const auth = { Authorization: `Bearer ${token}` };
    // The "before" side: the same build with the compiled mapping off, or another build (BENCH_BASE_ROOT), on the same database.
    const baseRoot = process.env.BENCH_BASE_ROOT;
    generic = AB
      ? await bootKernel(
          {
            NMS_DATA_DIR: join(dataDir, "kernel-generic"),
            NMS_DATABASE_URL: dbUrl,
            NMS_BOOTSTRAP_TOKEN: token,
            ...QUIET_KERNEL_ENV,
            ...(baseRoot ? {} : { NODE_OPTIONS: `--import=${join(ROOT, "bench/lib/generic-json.mjs")}` }),
          },
          120000,
          baseRoot ?? ROOT,
        )
      : null;
    const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    for (const [name, c] of Object.entries(CLASSES)) {
      if (only && !only.includes(name)) continue;
      const body = await fetch(`${kernel.url}${c.path}`, { headers: auth }).then((r) => r.text());
      if (generic) {
        const other = await fetch(`${generic.url}${c.path}`, { headers: auth }).then((r) => r.text());
        print(`http_profile_${name}_generic_same_bytes`, other === body ? "yes" : "NO");
      }
      if (c.reference) {
        const refBody = await fetch(`${reference.url}${c.path}`).then((r) => r.text());
        print(`http_profile_${name}_reference_same_bytes`, refBody === body ? "yes" : `NO (service ${body.length}, reference ${refBody.length})`);
      }
      const fast = [];
      const gen = [];
      const ref = [];
      let last = null;
      for (let round = 0; round < ROUNDS; round++) {
        last = await measure(kernel.url, c.path, auth, kernel.child.pid);
        fast.push(last.cpuMs);
        if (generic) gen.push((await measure(generic.url, c.path, auth, generic.child.pid)).cpuMs);
        if (c.reference && round === 0) ref.push((await measure(reference.url, c.path, {}, reference.child.pid)).cpuMs);
      }
      let line = `bytes=${body.length} service_cpu_ms_per_req=${median(fast).toFixed(3)} (${fast.map((x) => x.toFixed(2)).join(",")}) rps=${Math.round(last.rps)} non2xx=${last.non2xx} errors=${last.errors}`;
      if (generic) line += ` generic_json_cpu_ms_per_req=${median(gen).toFixed(3)} (${gen.map((x) => x.toFixed(2)).join(",")})`;
      if (ref.length) line += ` reference_cpu_ms_per_req=${ref[0].toFixed(3)} cpu_ratio_ref_over_service=${(ref[0] / median(fast)).toFixed(2)}`;
      print(`http_profile_${name}`, `${line} load=${load()}`);
    }
  } finally {
    await reference?.stop();
    await generic?.stop().catch((e) => console.error(e.message));
    await db.end();
    await kernel.stop().catch((e) => console.error(e.message));
    await cleanup();
  }
  if (PROFILE) summarise(profDir);
}

if (process.argv[2] === "summarise") {
  summarise(process.argv[3]);
  process.exit(0);
}
const store = benchStore("httpprof");
await main(store).catch(async (err) => {
  console.error(err);
  await store.cleanup();
  process.exit(1);
});
process.exit(0);
