/* global fetch */
// Netcloud sync benchmark (`npm run build --silent && node bench/netcloud-sync.mjs`).
//
// A local HTTPS platform in this process (the protocol of test/support/netcloudServer.ts: Bearer key, Link rel=next
// pagination at perPage=1000, a self-signed certificate from the openssl CLI) serves one organization with
// BENCH_NETWORKS networks (500) and BENCH_DEVICES devices (50,000), all online, each network a /24. The built kernel
// runs as its own process (bench/lib/kernel.mjs) on a fresh database, with BENCH_FOLDERS folders (250) holding the
// /24 of one network each, so filing by prefix has work to do. Then:
//   1. the organization is added: its first sync (import off) reads networks, 50 pages of devices and 50 of statuses
//      and saves them;
//   2. import on (file_by_prefix): a sync imports every device as a node through inventory's discovery import;
//   3. a steady sync: everything known, nothing to import.
// Each time is the sync's own duration (its "organization synced" log line). The kernel's resident memory is sampled
// every 50 ms from /proc. Prints
//   netcloud_sync_devices, netcloud_sync_networks
//   netcloud_sync_first_ms        sync 1 (fetch + save, no import)
//   netcloud_sync_import_ms       sync 2 (fetch + save + import of every device)
//   netcloud_sync_steady_ms       sync 3 (fetch + save, nothing new)
//   netcloud_sync_rss_idle_mib    kernel RSS before sync 1
//   netcloud_sync_rss_peak_mib    highest kernel RSS seen during the three syncs
//   netcloud_sync_nodes           nodes after sync 2
//   load                          1/5/15-minute load averages at the end
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchStore, bootKernel, load, MAIN, print } from "./lib/kernel.mjs";

const DEVICES = Number(process.env.BENCH_DEVICES ?? 50000);
const NETWORKS = Number(process.env.BENCH_NETWORKS ?? 500);
const FOLDERS = Number(process.env.BENCH_FOLDERS ?? 250);
const KEY = randomBytes(16).toString("hex");
const ORG = "o-bench";

if (!existsSync(MAIN)) {
  console.error(`${MAIN} is missing: run "npm run build" first.`);
  process.exit(1);
}

/** A self-signed certificate for 127.0.0.1 (as test/support/httpTarget.ts makes one). */
function certificate() {
  const dir = mkdtempSync(join(tmpdir(), "nms-bench-nc-cert-"));
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=localhost"].concat([
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const netIp = (i) => `10.${100 + Math.floor(i / 256)}.${i % 256}`;
const networks = Array.from({ length: NETWORKS }, (_, i) => ({ id: `N${String(i).padStart(4, "0")}`, name: `site network ${i}` }));
const perNet = Math.ceil(DEVICES / NETWORKS);
const devices = Array.from({ length: DEVICES }, (_, i) => {
  const net = Math.floor(i / perNet);
  return {
    serial: `Q2XX-${String(i).padStart(6, "0")}`,
    name: `switch-${i}`,
    networkId: networks[net].id,
    model: "MS120-48",
    lanIp: `${netIp(net)}.${(i % perNet) + 1}`,
  };
});
const index = new Map(devices.map((d, i) => [d.serial, i]));

function startPlatform(tls) {
  const server = createServer(tls, (req, res) => {
    const url = new URL(req.url, "https://127.0.0.1");
    const json = (status, body, headers = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${KEY}`) return json(401, { errors: ["Invalid API key"] });
    const origin = `https://127.0.0.1:${server.address().port}`;
    if (url.pathname === "/api/v1/organizations") return json(200, [{ id: ORG, name: "Bench Org" }]);
    const m = /^\/api\/v1\/organizations\/o-bench\/(networks|devices|devices\/statuses)$/.exec(url.pathname);
    if (!m) return json(404, { errors: ["Not found"] });
    const perPage = Math.min(1000, Number(url.searchParams.get("perPage") ?? 1000));
    const rows = m[1] === "networks" ? networks : devices;
    const after = url.searchParams.get("startingAfter");
    const start = after === null ? 0 : m[1] === "networks" ? rows.findIndex((r) => r.id === after) + 1 : index.get(after) + 1;
    const page = rows.slice(start, start + perPage);
    const headers = {};
    if (start + perPage < rows.length) {
      const next = new URL(`${origin}${url.pathname}`);
      next.searchParams.set("perPage", String(perPage));
      next.searchParams.set("startingAfter", m[1] === "networks" ? page.at(-1).id : page.at(-1).serial);
      headers.link = `<${next.href}>; rel=next`;
    }
    if (m[1] === "devices/statuses")
      return json(
        200,
        page.map((d) => ({ serial: d.serial, status: "online", lanIp: d.lanIp, networkId: d.networkId })),
        headers,
      );
    return json(200, page, headers);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const store = benchStore("netcloud");
const token = randomBytes(24).toString("hex");
let peak = 0;
let sampler = null;
try {
  const tls = certificate();
  const platform = await startPlatform(tls);
  const base = `https://127.0.0.1:${platform.address().port}/api/v1`;
  const configFile = join(store.dataDir, "bench-config.json");
  // The embedded poller stays off: 50,000 new nodes would otherwise be polled during the syncs being timed.
  writeFileSync(
    configFile,
    JSON.stringify({
      pluginConfig: { polling: { embeddedPoller: false }, netcloud: { allowedHosts: ["127.0.0.1"], defaultBaseUrl: base, caCertPem: tls.cert } },
    }),
  );
  const kernel = await bootKernel({
    DATABASE_URL: await store.database(),
    NMS_DATA_DIR: store.dataDir,
    NMS_BOOTSTRAP_TOKEN: token,
    NMS_CONFIG: configFile,
  });
  const synced = [];
  let out = "";
  kernel.child.stdout.on("data", (c) => {
    out += c;
    let nl;
    while ((nl = out.indexOf("\n")) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.includes("netcloud: organization synced")) synced.push(JSON.parse(line));
      if (line.includes("netcloud:") && line.includes("failed")) console.error(line.slice(0, 500));
    }
  });
  const rss = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${kernel.child.pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  };
  const api = async (method, path, body) => {
    const res = await fetch(`${kernel.url}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
  const waitSync = async (n) => {
    const t0 = Date.now();
    while (synced.length < n) {
      if (Date.now() - t0 > 30 * 60 * 1000) throw new Error("no sync within 30 minutes");
      await new Promise((r) => setTimeout(r, 50));
    }
    const s = synced[n - 1];
    if (s.status !== "ok") throw new Error(`sync ${n} ended ${s.status}`);
    return s;
  };

  for (let i = 0; i < FOLDERS; i++) await api("POST", "/node-groups", { name: `site ${i}`, ip_ranges: [`${netIp(i)}.0/24`] });
  await new Promise((r) => setTimeout(r, 2000));
  const idle = rss();
  sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);

  const { id } = await api("POST", "/netcloud/orgs", { org_id: ORG, api_key: KEY });
  const first = await waitSync(1);
  await api("PUT", `/netcloud/orgs/${id}/import-settings`, { import_devices: true, file_by_prefix: true });
  await api("POST", `/netcloud/orgs/${id}/sync`);
  const imported = await waitSync(2);
  await api("POST", `/netcloud/orgs/${id}/sync`);
  const steady = await waitSync(3);
  clearInterval(sampler);
  const view = await api("GET", `/netcloud/orgs/${id}`);

  print("netcloud_sync_devices", first.devices);
  print("netcloud_sync_networks", first.networks);
  print("netcloud_sync_first_ms", first.ms);
  print("netcloud_sync_import_ms", imported.ms);
  print("netcloud_sync_imported", imported.imported);
  print("netcloud_sync_steady_ms", steady.ms);
  for (const [name, s] of [
    ["first", first],
    ["import", imported],
    ["steady", steady],
  ]) {
    print(`netcloud_sync_${name}_split_ms`, `fetch ${s.fetch_ms} / save ${s.save_ms} / import ${s.import_ms}`);
  }
  print("netcloud_sync_requests_per_sync", first.requests);
  print("netcloud_sync_rss_idle_mib", idle.toFixed(0));
  print("netcloud_sync_rss_peak_mib", peak.toFixed(0));
  print("netcloud_sync_nodes", view.devices_as_nodes);
  print("load", load());
  await kernel.stop();
  platform.closeAllConnections();
  platform.close();
} finally {
  if (sampler) clearInterval(sampler);
  await store.cleanup();
}
