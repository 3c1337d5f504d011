/**
 * Process-level boot tests: `node dist/core/main.js` as a real child process
 * (test/support/spawnKernel.ts), on loopback and free ports. Embedded
 * PostgreSQL where the embedded server is the point; DATABASE_URL mode on the
 * run's shared test server everywhere else, to keep the file fast.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { bootFailure, MAIN, ROOT, spawnKernel, type SpawnedKernel } from "../support/spawnKernel.js";
import { createTestDatabase, rawQuery } from "../support/db.js";

const TOKEN = "boot-test-bootstrap-token-0123456789";

interface HealthBody {
  status: string;
  mode: string;
  store: { kind: string; status: string };
  plugins: { id: string; version: string }[];
}

interface Envelope {
  error: { code: string; message: string };
}

// ---------------------------------------------------------------- processes

/** Every data dir a test used; afterEach kills whatever still runs on it and removes it. */
const dirs: string[] = [];
/** Every kernel a test started; afterEach stops the ones still running. */
const live: SpawnedKernel[] = [];

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nms-boot-"));
  dirs.push(dir);
  return dir;
}

async function boot(env: NodeJS.ProcessEnv = {}, dataDir = newDataDir()): Promise<SpawnedKernel> {
  if (!dirs.includes(dataDir)) dirs.push(dataDir);
  const k = await spawnKernel({ env, dataDir, timeoutMs: 45000 });
  live.push(k);
  return k;
}

function procCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

function procEnv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  } catch {
    return [];
  }
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
}

function alive(pid: number): boolean {
  // A zombie has ended: it only waits for a parent (here, often none that reaps) to collect its status.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
  } catch {
    // no /proc entry: gone
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * PostgreSQL server (and initdb) processes working on `<dataDir>/pg`. A backend the server has just forked still shows
 * the server's own command line until it renames itself, so processes whose parent is one of them are not counted.
 */
function postgresPidsFor(dataDir: string): number[] {
  const pgDir = join(dataDir, "pg");
  const found = allPids().filter((pid) => {
    const cmd = procCmdline(pid);
    return cmd.length > 0 && /(postgres|initdb)$/.test(cmd[0]) && cmd.some((a) => a === pgDir || a === `--pgdata=${pgDir}`);
  });
  return found.filter((pid) => !found.includes(parentOf(pid) ?? -1));
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** Kernel processes (node dist/core/main.js) started on this data dir, including ones a failed spawn left behind. */
function kernelPidsFor(dataDir: string): number[] {
  return allPids().filter((pid) => {
    const cmd = procCmdline(pid);
    return cmd[1] === MAIN && procEnv(pid).includes(`NMS_DATA_DIR=${dataDir}`);
  });
}

/** The postmaster pid recorded in `<dataDir>/pg/postmaster.pid`, if the file exists. */
function postmasterPid(dataDir: string): number | null {
  const file = join(dataDir, "pg", "postmaster.pid");
  if (!existsSync(file)) return null;
  return Number(readFileSync(file, "utf8").split("\n")[0]);
}

/** Direct children of a process (a postmaster's io workers, checkpointer, ...). */
function childrenOf(ppid: number): number[] {
  return allPids().filter((pid) => parentOf(pid) === ppid);
}

async function waitGone(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pids.every((p) => !alive(p))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pids.every((p) => !alive(p));
}

/** true when the promise settles within ms (the timer is cleared either way, so jest can exit). */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  return done;
}

async function terminate(pids: number[], signal: NodeJS.Signals, graceMs: number): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  if (!(await waitGone(pids, graceMs))) {
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await waitGone(pids, 5000);
  }
}

async function streamsClosed(k: SpawnedKernel): Promise<void> {
  await Promise.all([k.child.stdout, k.child.stderr].map((s) => (!s || (s as Readable & { closed: boolean }).closed ? undefined : once(s, "close"))));
}

/** Sends the signal, waits for the exit code and for the last output to arrive. */
async function stop(k: SpawnedKernel, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
  const code = await k.stop(signal);
  await streamsClosed(k);
  return code;
}

afterEach(async () => {
  await Promise.all(
    live.splice(0).map(async (k) => {
      if (k.child.exitCode !== null || k.child.signalCode !== null) return;
      k.child.kill("SIGTERM");
      const done = await within(k.exited, 20000);
      if (!done) k.child.kill("SIGKILL");
    }),
  );
  for (const dir of dirs.splice(0)) await cleanDataDir(dir);
});

/** Ends whatever still runs on a data dir (a kernel a failed spawn left, an orphaned server), then removes it. */
async function cleanDataDir(dir: string): Promise<void> {
  await terminate(kernelPidsFor(dir), "SIGTERM", 20000);
  // An orphaned server (a SIGKILLed kernel, or a test that failed half-way): fast shutdown, then SIGKILL.
  await terminate(postgresPidsFor(dir), "SIGINT", 10000);
  rmSync(dir, { recursive: true, force: true });
}

type BootFailure = Awaited<ReturnType<typeof bootFailure>>;

/**
 * Runs boots that must fail all at once (each costs a node start-up, ~1 s) and
 * hands each test its own result; their data dirs are cleaned after the block.
 */
function failingBoots(envs: Record<string, () => NodeJS.ProcessEnv>): (name: string) => Promise<{ dataDir: string; res: BootFailure }> {
  const runs = new Map<string, Promise<{ dataDir: string; res: BootFailure }>>();
  const used: string[] = [];
  beforeAll(() => {
    for (const [name, env] of Object.entries(envs)) {
      const dataDir = mkdtempSync(join(tmpdir(), "nms-boot-"));
      used.push(dataDir);
      runs.set(
        name,
        bootFailure({ NMS_DATA_DIR: dataDir, ...env() }).then((res) => ({ dataDir, res })),
      );
    }
  });
  afterAll(async () => {
    await Promise.allSettled(runs.values());
    for (const dir of used) await cleanDataDir(dir);
  });
  return (name) => runs.get(name)!;
}

// ---------------------------------------------------------------- HTTP

async function api<T = unknown>(url: string, options: { method?: string; token?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(url, {
    method: options.method ?? "GET",
    headers: {
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Stops with the signal and expects exit code 0; on another code the diff shows the end of stderr. */
async function expectCleanExit(k: SpawnedKernel, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  const code = await stop(k, signal);
  expect({ code, stderr: code === 0 ? "" : k.stderr().slice(-1500) }).toEqual({ code: 0, stderr: "" });
}

const health = (k: SpawnedKernel) => api<HealthBody>(`${k.url}/api/v1/health`);

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

function expectStoppedClean(dataDir: string): void {
  expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(false);
  expect(postgresPidsFor(dataDir)).toEqual([]);
}

// ---------------------------------------------------------------- embedded store

describe("embedded PostgreSQL in the data dir", () => {
  it("boots on a fresh data dir, reports itself healthy, prints the admin password once and stops on SIGTERM", async () => {
    const k = await boot();
    expect(k.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(k.stdout()).toMatch(/nms-core \S+ ready at http:\/\/127\.0\.0\.1:\d+ \(mode full, store embedded, plugins: none\) in \d+ ms/);
    expect(k.stdout()).toContain("initialising embedded PostgreSQL");
    expect(existsSync(join(k.dataDir, "pg", "PG_VERSION"))).toBe(true);

    const h = await health(k);
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: "ok", mode: "full", store: { kind: "embedded", status: "ok" } });

    const pwLines = k
      .stdout()
      .split("\n")
      .filter((l) => l.includes("generated password"));
    expect(pwLines).toHaveLength(1);
    const password = /generated password: (\S+)/.exec(pwLines[0])![1];
    expect(count(k.stdout() + k.stderr(), password)).toBe(1);
    const login = await api<{ token: string }>(`${k.url}/api/v1/auth/sessions`, { method: "POST", body: { username: "admin", password } });
    expect(login.status).toBe(201);

    const pm = postmasterPid(k.dataDir);
    expect(pm).not.toBeNull();
    expect(alive(pm!)).toBe(true);

    await expectCleanExit(k, "SIGTERM");
    expect(k.stdout()).toContain('"msg":"stopped"');
    expectStoppedClean(k.dataDir);
    expect(alive(pm!)).toBe(false);
  });

  it("reuses an existing data dir: no initdb, data kept, no second admin password", async () => {
    const dataDir = newDataDir();
    const first = await boot({ NMS_BOOTSTRAP_TOKEN: TOKEN }, dataDir);
    expect(first.stdout()).toContain("initialising embedded PostgreSQL");
    expect(count(first.stdout(), "generated password")).toBe(1);
    const created = await api<{ id: string }>(`${first.url}/api/v1/accounts`, {
      method: "POST",
      token: TOKEN,
      body: { username: "alice", password: "alice-password-1", role: "viewer" },
    });
    expect(created.status).toBe(201);
    await expectCleanExit(first);
    expectStoppedClean(dataDir);

    const second = await boot({ NMS_BOOTSTRAP_TOKEN: TOKEN }, dataDir);
    expect(second.stdout()).not.toContain("initialising");
    expect(second.stdout()).toMatch(/"msg":"embedded PostgreSQL started".*"fresh":false/);
    expect(second.stdout()).not.toContain("generated password");
    expect((await health(second)).body.store).toEqual({ kind: "embedded", status: "ok" });

    const account = await api<{ username: string; role: string }>(`${second.url}/api/v1/accounts/${created.body.id}`, { token: TOKEN });
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ username: "alice", role: "viewer" });
    const login = await api(`${second.url}/api/v1/auth/sessions`, { method: "POST", body: { username: "alice", password: "alice-password-1" } });
    expect(login.status).toBe(201);

    await expectCleanExit(second);
    expectStoppedClean(dataDir);
  });

  it("recovers after a SIGKILL: stops the orphaned server, and removes a stale postmaster.pid", async () => {
    const dataDir = newDataDir();

    // 1. Kill the kernel outright; its PostgreSQL may survive as an orphan (usual on Linux) or not.
    const first = await boot({}, dataDir);
    const pm1 = postmasterPid(dataDir)!;
    expect(alive(pm1)).toBe(true);
    first.child.kill("SIGKILL");
    await first.exited;
    expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(true);
    const orphanSurvived = alive(pm1);

    const second = await boot({}, dataDir);
    expect((await health(second)).body).toMatchObject({ status: "ok", store: { kind: "embedded", status: "ok" } });
    expect(second.stdout()).toMatch(orphanSurvived ? /orphaned embedded PostgreSQL left by a killed process; stopping it/ : /removed a stale postmaster\.pid/);
    expect(alive(pm1)).toBe(false);
    const pm2 = postmasterPid(dataDir)!;
    expect(pm2).not.toBe(pm1);

    // 2. Kill the kernel and its server too: only a stale postmaster.pid is left.
    second.child.kill("SIGKILL");
    await second.exited;
    const workers = childrenOf(pm2);
    if (alive(pm2)) process.kill(pm2, "SIGKILL");
    expect(await waitGone([pm2, ...workers], 10000)).toBe(true);
    expect(postmasterPid(dataDir)).toBe(pm2);

    const third = await boot({}, dataDir);
    expect(third.stdout()).toMatch(/"level":"warn".*removed a stale postmaster\.pid left by a killed process/);
    expect((await health(third)).body.store).toEqual({ kind: "embedded", status: "ok" });

    await expectCleanExit(third);
    expectStoppedClean(dataDir);
  });

  it("runs two instances with different data dirs side by side", async () => {
    const [a, b] = await Promise.all([boot(), boot()]);
    expect(a.url).not.toBe(b.url);
    const [ha, hb] = await Promise.all([health(a), health(b)]);
    expect(ha.body).toMatchObject({ status: "ok", store: { kind: "embedded", status: "ok" } });
    expect(hb.body).toMatchObject({ status: "ok", store: { kind: "embedded", status: "ok" } });
    const pgPort = (k: SpawnedKernel) => /"msg":"embedded PostgreSQL started","port":(\d+)/.exec(k.stdout())?.[1];
    expect(pgPort(a)).toBeDefined();
    expect(pgPort(a)).not.toBe(pgPort(b));
    expect(postgresPidsFor(a.dataDir)).toHaveLength(1);
    expect(postgresPidsFor(b.dataDir)).toHaveLength(1);

    await Promise.all([expectCleanExit(a), expectCleanExit(b)]);
    expectStoppedClean(a.dataDir);
    expectStoppedClean(b.dataDir);
  });

  it("a SIGTERM during boot (server started, app not ready) leaves no orphaned server behind", async () => {
    const dataDir = newDataDir();
    const child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NMS_PORT: "0", NMS_HOST: "127.0.0.1", NMS_DATA_DIR: dataDir, NMS_BUILTIN_PLUGINS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let out = "";
    let signalled = false;
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (!signalled && out.includes('"msg":"embedded PostgreSQL started"')) {
        signalled = true;
        child.kill("SIGTERM");
      }
    });
    child.stderr.resume();
    const finished = await within(exited, 30000);
    if (!finished) child.kill("SIGKILL");
    expect(signalled).toBe(true);
    expect(finished).toBe(true);
    // Wait a moment for a server being shut down by the kernel to finish; an orphan would stay.
    await waitGone(postgresPidsFor(dataDir), 5000);
    expectStoppedClean(dataDir);
  });

  it("stops cleanly on SIGINT too", async () => {
    const k = await boot();
    expect((await health(k)).status).toBe(200);
    await expectCleanExit(k, "SIGINT");
    expect(k.stdout()).toContain("embedded PostgreSQL stopped");
    expectStoppedClean(k.dataDir);
  });

  it("stops in order on a terminal's Ctrl-C (SIGINT to its whole process group): the server is stopped last, by the service", async () => {
    const dataDir = newDataDir();
    dirs.push(dataDir);
    const k = await spawnKernel({
      env: { NMS_BUILTIN_PLUGINS: "true", NMS__pluginConfig__polling__embeddedPoller: "false" },
      dataDir,
      timeoutMs: 45000,
      ownGroup: true,
    });
    live.push(k);
    expect((await health(k)).status).toBe(200);
    process.kill(-k.child.pid!, "SIGINT");
    expect(await within(k.exited, 30000)).toBe(true);
    expect({ code: await k.exited, stderr: k.stderr().slice(-1500) }).toEqual({ code: 0, stderr: "" });
    // Had the server got the signal too, it would have ended every connection under the service's feet.
    expect(k.stdout()).not.toContain("connection lost");
    expect(k.stdout()).toContain("embedded PostgreSQL stopped");
    expectStoppedClean(dataDir);
  });
});

// ---------------------------------------------------------------- other modes

describe("DATABASE_URL and skeleton modes", () => {
  it("DATABASE_URL: uses that server, starts none, stops without touching it", async () => {
    const url = await createTestDatabase();
    const k = await boot({ DATABASE_URL: url });
    expect(k.stdout()).toMatch(/ready at \S+ \(mode full, store external/);
    expect((await health(k)).body).toMatchObject({ status: "ok", mode: "full", store: { kind: "external", status: "ok" } });
    expect(existsSync(join(k.dataDir, "pg"))).toBe(false);
    expect(existsSync(join(k.dataDir, "pg.credentials"))).toBe(false);
    expect(postgresPidsFor(k.dataDir)).toEqual([]);
    // The kernel really migrated and seeded that database.
    expect(await rawQuery(url, "SELECT username FROM core.accounts")).toEqual([{ username: "admin" }]);

    await expectCleanExit(k);
    expect(await rawQuery(url, "SELECT 1 AS up")).toEqual([{ up: 1 }]);
  });

  it("NMS_ADMIN_PASSWORD sets the first admin's password (nothing printed)", async () => {
    const password = "correct-horse-battery-staple";
    const k = await boot({ DATABASE_URL: await createTestDatabase(), NMS_ADMIN_PASSWORD: password });
    expect(k.stdout()).not.toContain("generated password");
    expect(k.stdout() + k.stderr()).not.toContain(password);

    const login = await api<{ token: string; expires_at: string }>(`${k.url}/api/v1/auth/sessions`, {
      method: "POST",
      body: { username: "admin", password },
    });
    expect(login.status).toBe(201);
    const me = await api(`${k.url}/api/v1/auth/me`, { token: login.body.token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ kind: "session", role: "admin", scope: "All", username: "admin" });

    const wrong = await api<Envelope>(`${k.url}/api/v1/auth/sessions`, { method: "POST", body: { username: "admin", password: "not-the-password" } });
    expect(wrong.status).toBe(401);
    await expectCleanExit(k);
  });

  it("skeleton mode: no store, no server started, writes answer 503 store_unavailable", async () => {
    const k = await boot({ NMS_MODE: "skeleton", NMS_BOOTSTRAP_TOKEN: TOKEN });
    expect(k.stdout()).toMatch(/ready at \S+ \(mode skeleton, store none/);
    expect((await health(k)).body).toMatchObject({ status: "ok", mode: "skeleton", store: { kind: "none", status: "absent" } });
    expect(existsSync(join(k.dataDir, "pg"))).toBe(false);
    expect(postgresPidsFor(k.dataDir)).toEqual([]);
    expect(childrenOf(k.child.pid!)).toEqual([]);

    const me = await api(`${k.url}/api/v1/auth/me`, { token: TOKEN });
    expect(me.status).toBe(200);
    const write = await api<Envelope>(`${k.url}/api/v1/tokens`, { method: "POST", token: TOKEN, body: { name: "ci", role: "viewer", scope: "All" } });
    expect(write.status).toBe(503);
    expect(write.body).toEqual({ error: { code: "store_unavailable", message: expect.any(String) } });

    await expectCleanExit(k);
  });
});

// ---------------------------------------------------------------- refusals at boot

describe("configuration errors", () => {
  const cases: [string, string, string][] = [
    ["NMS_PORT", "abc", "port"],
    ["NMS_MODE", "bogus", "mode"],
    ["NMS_LOG_LEVEL", "loud", "logLevel"],
    ["NMS__nope", "1", "nope"],
  ];
  const result = failingBoots(Object.fromEntries(cases.map(([name, value]) => [name, () => ({ [name]: value })])));

  it.each(cases)("%s=%s stops the boot naming the key, before any database starts", async (name, _value, key) => {
    const { dataDir, res } = await result(name);
    expect(res.code).toBeGreaterThan(0);
    expect(res.stderr).toContain("Invalid configuration");
    expect(res.stderr).toContain(`"${key}" (from ${name})`);
    expect(res.stdout).not.toContain("ready at");
    expect(readdirSync(dataDir)).toEqual([]);
    expect(postgresPidsFor(dataDir)).toEqual([]);
  });
});

describe("plugin loader refusals", () => {
  let pluginDir: string;
  const file = (name: string) => join(pluginDir, `${name}.mjs`);
  const plugin = (exportName: string, manifest: string) =>
    `import { definePlugin } from "nms-core";\nexport const ${exportName} = definePlugin(${manifest});\n`;

  beforeAll(() => {
    pluginDir = mkdtempSync(join(tmpdir(), "nms-boot-plugins-"));
    const base = `id: "%ID%", version: "1.0.0", kernel: "^0.1.0"`;
    const files: Record<string, [string, string]> = {
      fine: ["finePlugin", `{ ${base.replace("%ID%", "fine")} }`],
      "odd-key": ["oddKeyPlugin", `{ ${base.replace("%ID%", "odd-key")}, colour: "blue" }`],
      "twin-one": ["twinPlugin", `{ ${base.replace("%ID%", "twin")} }`],
      "twin-two": ["twinPlugin", `{ ${base.replace("%ID%", "twin")} }`],
      needy: ["needyPlugin", `{ ${base.replace("%ID%", "needy")}, dependsOn: { "absent-plugin": "*" } }`],
      "cycle-a": ["cycleAPlugin", `{ ${base.replace("%ID%", "cycle-a")}, dependsOn: { "cycle-b": "*" } }`],
      "cycle-b": ["cycleBPlugin", `{ ${base.replace("%ID%", "cycle-b")}, dependsOn: { "cycle-a": "*" } }`],
    };
    for (const [name, [exportName, manifest]] of Object.entries(files)) writeFileSync(file(name), plugin(exportName, manifest));
  });
  afterAll(() => rmSync(pluginDir, { recursive: true, force: true }));

  it("loads a well-formed plugin file from the same folder (control)", async () => {
    const k = await boot({ NMS_MODE: "skeleton", NMS_PLUGINS: file("fine") });
    expect(k.stdout()).toContain("plugins: fine)");
    expect((await health(k)).body.plugins).toEqual([{ id: "fine", version: "1.0.0" }]);
    await expectCleanExit(k);
  });

  const refusals: [string, string[], RegExp][] = [
    ["an unknown manifest key", ["odd-key"], /plugin "odd-key": unknown manifest key "colour"/],
    ["a duplicate id", ["twin-one", "twin-two"], /plugin "twin": duplicate id \(from \S+twin-one\.mjs and \S+twin-two\.mjs\)/],
    ["a missing dependency", ["needy"], /plugin "needy": depends on "absent-plugin", which is not loaded/],
    ["a dependency cycle", ["cycle-a", "cycle-b"], /plugin "cycle-a": dependency cycle cycle-a -> cycle-b -> cycle-a/],
  ];
  // Declared after the beforeAll that writes the files, so it runs after it.
  const result = failingBoots(Object.fromEntries(refusals.map(([what, names]) => [what, () => ({ NMS_PLUGINS: names.map(file).join(",") })])));

  it.each(refusals)("refuses %s, naming the plugin, before any database starts", async (what, _names, message) => {
    const { dataDir, res } = await result(what);
    expect(res.code).toBeGreaterThan(0);
    expect(res.stderr).toMatch(/nms-core failed to start: plugin /);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).not.toMatch(/\n\s+at /); // a refusal is a sentence, not a stack trace
    expect(res.stdout).not.toContain("ready at");
    expect(existsSync(join(dataDir, "pg"))).toBe(false);
    expect(postgresPidsFor(dataDir)).toEqual([]);
  });
});

// ---------------------------------------------------------------- external plugin

describe("external plugin loaded by package name", () => {
  it("mounts its route and applies its migration in its own schema", async () => {
    const url = await createTestDatabase();
    const k = await boot({
      DATABASE_URL: url,
      NMS_BOOTSTRAP_TOKEN: TOKEN,
      NMS_PLUGINS: "nms-plugin-external",
      NMS_PLUGIN_SEARCH_PATHS: join(ROOT, "test/fixtures/external"),
    });
    expect(k.stdout()).toContain("plugins: external-hello)");
    expect((await health(k)).body.plugins).toEqual([{ id: "external-hello", version: "1.2.3" }]);

    const hello = await api(`${k.url}/api/v1/external-hello`, { token: TOKEN });
    expect(hello.status).toBe(200);
    expect(hello.body).toEqual({ hello: "from an external plugin", caller: "bootstrap" });
    const anonymous = await api<Envelope>(`${k.url}/api/v1/external-hello`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toEqual(expect.any(String));

    expect(await rawQuery(url, "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'external_hello'")).toHaveLength(1);
    expect(await rawQuery(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'external_hello'")).toEqual([
      { table_name: "greetings" },
    ]);
    expect(await rawQuery(url, "SELECT name FROM core.migrations WHERE plugin = 'external-hello'")).toEqual([{ name: "0001_init" }]);

    await expectCleanExit(k);
  });

  it("loads it from a folder outside this repository, giving it the host's @tsed packages", async () => {
    // Installed elsewhere, the package cannot find @tsed/* or nms-core by itself: the host provides them.
    const outside = mkdtempSync(join(tmpdir(), "nms-outside-"));
    cpSync(join(ROOT, "test/fixtures/external/node_modules"), join(outside, "node_modules"), { recursive: true });
    try {
      const k = await boot({
        DATABASE_URL: await createTestDatabase(),
        NMS_BOOTSTRAP_TOKEN: TOKEN,
        NMS_PLUGINS: "nms-plugin-external",
        NMS_PLUGIN_SEARCH_PATHS: outside,
      });
      const hello = await api(`${k.url}/api/v1/external-hello`, { token: TOKEN });
      expect(hello.status).toBe(200);
      expect(hello.body).toEqual({ hello: "from an external plugin", caller: "bootstrap" });
      await expectCleanExit(k);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
