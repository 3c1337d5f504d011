/**
 * Root and closed folders: as root the embedded PostgreSQL runs as the system user postgres, which cannot enter a
 * checkout in /root or in a 0700 temporary folder. Here both the server binaries and the data directory live inside
 * such a folder (the binaries are a copy of the installed ones), and the server must still start: from a reachable
 * copy of its binaries, with a new cluster outside the data directory, linked from it. An existing cluster it cannot
 * reach is refused with one line. The reachability probe itself is checked as any user.
 */
import { cp, lstat, mkdir, mkdtemp, readdir, readlink, rm, stat, chmod, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ConfigError } from "../../core/config/Config.js";
import { JsonLogger } from "../../core/logging/Logger.js";
import { EmbeddedServer } from "../../core/store/EmbeddedServer.js";
import { packageNativeDir } from "../../core/store/postgresProcess.js";
import { firstBlocked, serverUser } from "../../core/store/serverAccess.js";

const asRoot = process.getuid?.() === 0;
const rootOnly = asRoot ? it : it.skip;

const cleanup: string[] = [];
afterAll(async () => {
  for (const d of cleanup) await rm(d, { recursive: true, force: true });
});

/** A folder only its owner may enter (mkdtemp makes it 0700). */
async function closedDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "nms-closed-"));
  cleanup.push(dir);
  expect((await stat(dir)).mode & 0o777).toBe(0o700);
  return dir;
}

async function openDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "nms-open-"));
  cleanup.push(dir);
  await chmod(dir, 0o755);
  return dir;
}

function logger() {
  const lines: { msg: string; [k: string]: unknown }[] = [];
  return { lines, log: new JsonLogger("info", "test", (l) => void lines.push(JSON.parse(l))) };
}

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<{ one: number }>("SELECT 1 AS one")).rows[0].one;
  } finally {
    await client.end();
  }
}

describe("embedded PostgreSQL from a folder the server user cannot enter", () => {
  it("firstBlocked names the first folder on the way that the user cannot pass, and null when the way is open", async () => {
    const closed = await closedDir();
    await mkdir(join(closed, "inner"));
    await writeFile(join(closed, "inner", "prog"), "#!/bin/sh\n", { mode: 0o755 });
    // Root passes everywhere: as root the probe runs as postgres, the user the server runs as.
    const user = asRoot ? await serverUser() : { uid: process.getuid!(), gid: process.getgid!() };
    if (asRoot) {
      expect(await firstBlocked(user, join(closed, "inner", "prog"))).toBe(closed);
      await chmod(closed, 0o711);
    } else {
      // Its owner passes a 0700 folder; nobody passes a folder without x.
      await chmod(join(closed, "inner"), 0o600);
      expect(await firstBlocked(user, join(closed, "inner", "prog"))).toBe(join(closed, "inner"));
      await chmod(join(closed, "inner"), 0o755);
    }
    expect(await firstBlocked(user, join(closed, "inner", "prog"))).toBeNull();
    expect(await firstBlocked(user, join(closed, "inner"))).toBeNull();
    // A file that is not executable counts as blocked, itself.
    await chmod(join(closed, "inner", "prog"), 0o644);
    expect(await firstBlocked(user, join(closed, "inner", "prog"))).toBe(join(closed, "inner", "prog"));
  });

  rootOnly(
    "as root, starts from a reachable copy of its binaries with a cluster outside the closed data directory, and reuses both",
    async () => {
      const closed = await closedDir();
      const nativeDir = join(closed, "native");
      await cp(await packageNativeDir(), nativeDir, { recursive: true, verbatimSymlinks: true });
      const [cache, home] = [await openDir(), await openDir()];
      const dataDir = join(closed, "data");
      const { lines, log } = logger();
      // A cache folder others may write is passed over: root would run what someone put there.
      const writable = await openDir();
      await chmod(writable, 0o777);
      const options = { nativeDir, cacheDirs: [writable, join(cache, "nested")], clusterHome: home };

      const first = new EmbeddedServer(dataDir, log, options);
      try {
        const info = await first.start();
        expect(info.freshlyInitialised).toBe(true);
        expect(await selectOne(info.url)).toBe(1);
      } finally {
        await first.stop();
      }
      const [copy] = await readdir(join(cache, "nested"));
      expect(copy).toMatch(/^postgres-.+-[0-9a-f]{12}$/);
      const copied = await stat(join(cache, "nested", copy));
      expect({ uid: copied.uid, mode: copied.mode & 0o777 }).toEqual({ uid: 0, mode: 0o755 });
      expect(lines.map((l) => l.msg)).toContain("copied the embedded PostgreSQL binaries where the server user can reach them");
      expect(await readdir(writable)).toEqual([]);
      // The cluster: a folder of postgres's under the cluster home, linked from <dataDir>/pg.
      expect((await lstat(join(dataDir, "pg"))).isSymbolicLink()).toBe(true);
      const cluster = await readlink(join(dataDir, "pg"));
      expect(cluster.startsWith(home + "/")).toBe(true);
      expect((await stat(cluster)).uid).toBe((await serverUser()).uid);

      lines.length = 0;
      const second = new EmbeddedServer(dataDir, log, options);
      try {
        const info = await second.start();
        expect(info.freshlyInitialised).toBe(false);
        expect(await selectOne(info.url)).toBe(1);
      } finally {
        await second.stop();
      }
      expect(await readdir(join(cache, "nested"))).toEqual([copy]);
      expect(lines.map((l) => l.msg)).not.toContain("copied the embedded PostgreSQL binaries where the server user can reach them");
    },
    120_000,
  );

  rootOnly(
    "as root, two servers starting at once make one copy of the binaries between them",
    async () => {
      const closed = await closedDir();
      const nativeDir = join(closed, "native");
      await cp(await packageNativeDir(), nativeDir, { recursive: true, verbatimSymlinks: true });
      const [cache, home] = [await openDir(), await openDir()];
      const servers = ["a", "b"].map((n) => new EmbeddedServer(join(closed, n), logger().log, { nativeDir, cacheDirs: [cache], clusterHome: home }));
      try {
        const infos = await Promise.all(servers.map((s) => s.start()));
        for (const info of infos) expect(await selectOne(info.url)).toBe(1);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
      // One finished copy, no staging folder left behind by the process that lost the rename.
      expect(await readdir(cache)).toEqual([expect.stringMatching(/^postgres-/)]);
    },
    120_000,
  );

  rootOnly("as root, refuses with one line an existing cluster inside a folder the server user cannot enter", async () => {
    const closed = await closedDir();
    const dataDir = join(closed, "data");
    await mkdir(join(dataDir, "pg"), { recursive: true });
    await writeFile(join(dataDir, "pg", "PG_VERSION"), "18\n");
    await writeFile(join(dataDir, "pg.credentials"), "secret\n", { mode: 0o600 });
    const server = new EmbeddedServer(dataDir, logger().log, { cacheDirs: [await openDir()], clusterHome: await openDir() });
    const err = await server.start().then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).not.toContain("\n");
    expect(err!.message).toContain(`cannot enter ${closed} (mode 0700, owner root) to reach its cluster in ${join(dataDir, "pg")}`);
    expect(err!.message).toMatch(/set NMS_DATA_DIR to a folder it can reach, or use DATABASE_URL$/);
  });
});
