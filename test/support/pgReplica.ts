/**
 * A PostgreSQL primary and a streaming replica from the embedded binaries (the same postgres the service embeds; no
 * pg_basebackup ships with them): the primary is an EmbeddedServer (wal_level=replica is PostgreSQL's default), the
 * replica a base backup taken with the low-level API (pg_backup_start/pg_backup_stop), started with standby.signal,
 * a primary_conninfo for a replication role and a physical replication slot, on another free loopback port.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { appendFile, chmod, cp, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { JsonLogger } from "../../core/logging/Logger.js";
import { EmbeddedServer, freePort } from "../../core/store/EmbeddedServer.js";
import { packageNativeDir, stopPostgres } from "../../core/store/postgresProcess.js";
import { reachableBinaries, serverUser } from "../../core/store/serverAccess.js";

const SLOT = "nms_test_standby";
const STANDBY_READY = "ready to accept read-only connections";

export interface ReplicaPair {
  /** Superuser URL of the primary's `postgres` database. */
  primaryUrl: string;
  /** The same URL on the replica's port. */
  replicaUrl: string;
  /** The replica's URL for a database of the primary's URL `url`. */
  onReplica(url: string): string;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) every process of the replica: a server that hangs rather than refuses. */
  freezeReplica(frozen: boolean): void;
  /** Stops the replica (fast shutdown); reads that go to it fail from then on. */
  stopReplica(): Promise<void>;
  /** Everything down and removed. */
  close(): Promise<void>;
}

/** The replica's processes: the postmaster and each backend (every one its own process group), all running in its data directory. */
function serverProcesses(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === dir) found.push(Number(name));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

async function query(url: string, sql: string): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Waits until a database created on the primary can be read on the replica (its creation replayed). */
export async function replayed(url: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await query(url, "SELECT 1");
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const log = new JsonLogger("warn", "test-pg-replica", () => undefined);
  const dataDir = await mkdtemp(join(tmpdir(), "nms-test-pgrep-"));
  const primary = new EmbeddedServer(dataDir, log);
  const { url: primaryUrl, port: primaryPort } = await primary.start();
  const clusterDir = await realpath(join(dataDir, "pg"));
  const replicaDir = `${clusterDir}-standby`;
  let replica: ChildProcess | undefined;
  const close = async () => {
    for (const pid of serverProcesses(replicaDir)) process.kill(pid, "SIGCONT");
    if (replica) await stopPostgres(replica);
    await primary.stop();
    await rm(replicaDir, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const password = randomBytes(12).toString("hex");
    await query(primaryUrl, `CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD '${password}'`);
    await query(primaryUrl, `SELECT pg_create_physical_replication_slot('${SLOT}', true)`);

    // The low-level base backup: the copy is taken between start and stop on the one session that started it.
    const backup = new pg.Client({ connectionString: primaryUrl });
    await backup.connect();
    try {
      await backup.query("SELECT pg_backup_start('nms-test-standby', true)");
      await cp(clusterDir, replicaDir, { recursive: true, preserveTimestamps: true });
      const { rows } = await backup.query<{ labelfile: string }>("SELECT labelfile FROM pg_backup_stop(false)");
      await writeFile(join(replicaDir, "backup_label"), rows[0].labelfile);
    } finally {
      await backup.end();
    }
    // What a backup leaves out: the primary's pid file, its WAL (streamed from the slot instead) and its slots.
    for (const f of ["postmaster.pid", "postmaster.opts"]) await rm(join(replicaDir, f), { force: true });
    for (const sub of ["pg_wal", "pg_replslot"]) {
      for (const entry of await readdir(join(replicaDir, sub)))
        if (entry !== "archive_status") await rm(join(replicaDir, sub, entry), { recursive: true, force: true });
    }
    await writeFile(join(replicaDir, "standby.signal"), "");
    await appendFile(
      join(replicaDir, "postgresql.auto.conf"),
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=replicator password=${password} application_name=${SLOT}'\n` +
        `primary_slot_name = '${SLOT}'\n`,
    );

    const user = process.getuid?.() === 0 ? await serverUser() : undefined;
    let nativeDir = await packageNativeDir();
    await chmod(replicaDir, 0o700);
    if (user) {
      nativeDir = await reachableBinaries(user, nativeDir, log);
      execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, replicaDir]);
    }
    const port = await freePort();
    replica = spawn(
      join(nativeDir, "bin", "postgres"),
      ["-D", replicaDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
      { ...(user && { uid: user.uid, gid: user.gid }), cwd: "/", env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    const child = replica;
    let said = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the replica did not start: ${said.slice(-800)}`)), 30_000);
      child.stderr!.on("data", (c: Buffer) => {
        said = (said + c.toString("utf8")).slice(-4000);
        if (said.includes(STANDBY_READY)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the replica exited (${signal ?? code}): ${said.slice(-800)}`));
      });
    });
    const onReplica = (url: string) => {
      const u = new URL(url);
      u.port = String(port);
      return u.toString();
    };
    return {
      primaryUrl,
      replicaUrl: onReplica(primaryUrl),
      onReplica,
      freezeReplica: (frozen) => {
        for (const pid of serverProcesses(replicaDir)) process.kill(pid, frozen ? "SIGSTOP" : "SIGCONT");
      },
      stopReplica: async () => {
        if (replica) await stopPostgres(replica);
        replica = undefined;
      },
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
