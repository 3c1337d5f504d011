import { createHash } from "node:crypto";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, parse, relative, resolve } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../logging/Logger.js";

const execFileAsync = promisify(execFile);

/** The account PostgreSQL runs as when we are root (it refuses to run as root itself). */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

export const SERVER_USER_NAME = "postgres";

/** Where a reachable copy of the server binaries goes when the installed ones are out of the server user's reach, in order of preference. */
export const DEFAULT_CACHE_DIRS = ["/var/cache/nms-core", join(tmpdir(), "nms-core-cache")];

async function ids(name: string): Promise<ServerUser | null> {
  try {
    const [uid, gid] = await Promise.all([execFileAsync("id", ["-u", name]), execFileAsync("id", ["-g", name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return null;
  }
}

/** The system user `postgres`, created when missing. */
export async function serverUser(name = SERVER_USER_NAME): Promise<ServerUser> {
  const found = await ids(name);
  if (found) return found;
  try {
    await execFileAsync("groupadd", ["--system", name]).catch(async (err) => {
      // 9: the group exists already (a user removed without its group)
      if ((err as { code?: number }).code !== 9) throw err;
    });
    await execFileAsync("useradd", ["--system", "--gid", name, "--no-create-home", "--shell", "/usr/sbin/nologin", name]);
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim();
    throw new Error(`cannot create the system user "${name}" the embedded PostgreSQL runs as when started by root: ${detail}`);
  }
  const created = await ids(name);
  if (!created) throw new Error(`created the system user "${name}" but cannot read its uid`);
  return created;
}

/**
 * The first of `path` and its ancestors that `user` cannot pass through (for `path` itself: enter, or run if it is
 * a file), or null when all is fine. The kernel decides, not a reading of mode bits: ACLs, group
 * membership and root-squashed mounts all count. The probe is spawned the way the server is (uid and gid set, no
 * supplementary groups), so its answer holds for the server.
 */
export async function firstBlocked(user: { uid: number; gid: number }, target: string): Promise<string | null> {
  const path = resolve(target);
  const chain: string[] = [];
  for (let p = dirname(path); p !== parse(p).root; p = dirname(p)) chain.unshift(p);
  const script = 'for d in "$@"; do test -x "$d" || { printf %s "$d"; exit 1; }; done';
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", script, "sh", ...chain, path], {
      uid: user.uid,
      gid: user.gid,
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.on("error", (err) => reject(new Error(`cannot check what user ${user.uid} may reach: ${err.message}`)));
    child.on("close", (code) => resolve(code === 0 ? null : out || path));
  });
}

/** "mode 0700, owner root" of a folder, for messages. */
export async function describeFolder(path: string): Promise<string> {
  try {
    const s = await stat(path);
    const owner = await execFileAsync("id", ["-nu", String(s.uid)]).then(
      (r) => r.stdout.trim(),
      () => String(s.uid),
    );
    return `mode ${(s.mode & 0o7777).toString(8).padStart(4, "0")}, owner ${owner}`;
  } catch {
    return "cannot be read";
  }
}

/** Package version plus a digest of every file's name, size and mode and every link's target: enough to tell two builds apart without reading 60 MB. */
async function fingerprint(nativeDir: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name);
      const s = await lstat(path);
      hash.update(`${relative(nativeDir, path)}\0${s.mode}\0`);
      if (s.isSymbolicLink()) hash.update(`-> ${await readlink(path)}\0`);
      else if (s.isDirectory()) await walk(path);
      else hash.update(`${s.size}\0`);
    }
  };
  for (const sub of ["bin", "lib", "share"]) await walk(join(nativeDir, sub));
  let version = "unknown";
  try {
    version = JSON.parse(await readFile(join(nativeDir, "..", "package.json"), "utf8")).version ?? version;
  } catch {
    // a native folder outside its package (tests): the digest alone names it
  }
  return `postgres-${version}-${hash.digest("hex").slice(0, 12)}`;
}

async function openUp(path: string): Promise<void> {
  const s = await lstat(path);
  if (s.isSymbolicLink()) return;
  if (s.isDirectory()) {
    await chmod(path, 0o755);
    for (const name of await readdir(path)) await openUp(join(path, name));
  } else {
    await chmod(path, (s.mode & 0o111 ? 0o755 : 0o644) & 0o777);
  }
}

const complete = (dir: string) => ["initdb", "postgres"].every((b) => existsSync(join(dir, "bin", b)));

/**
 * The server binaries' folder (bin, lib, share) as `user` can reach it: `nativeDir` itself when it can, else a copy
 * made once under the first of `cacheDirs` that works and reused by every later start. The copy is owned by root, mode
 * 0755, and appears whole or not at all: it is made in a private folder beside its final name and renamed into place,
 * so two processes starting at once never see a half copy (the loser of the rename discards its own).
 */
export async function reachableBinaries(user: ServerUser, nativeDir: string, log: Logger, cacheDirs = DEFAULT_CACHE_DIRS): Promise<string> {
  const blocked = await firstBlocked(user, join(nativeDir, "bin", "postgres"));
  if (!blocked) return nativeDir;
  const name = await fingerprint(nativeDir);
  const tried: string[] = [];
  for (const cache of cacheDirs) {
    const target = join(cache, name);
    try {
      await mkdir(cache, { recursive: true, mode: 0o755 });
      // Root runs what it finds here: in a shared folder like /tmp, someone else may have made this folder first.
      const owner = await lstat(cache);
      if (!owner.isDirectory() || owner.uid !== 0 || owner.mode & 0o022) {
        tried.push(`${cache} (not a folder only root may write)`);
        continue;
      }
      if (existsSync(target) && !complete(target)) await rm(target, { recursive: true, force: true });
      if (!existsSync(target)) {
        const staging = await mkdtemp(join(cache, `.${name}-`));
        try {
          for (const sub of ["bin", "lib", "share"]) await cp(join(nativeDir, sub), join(staging, sub), { recursive: true, verbatimSymlinks: true });
          await openUp(staging);
          await rename(staging, target).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
          });
        } finally {
          await rm(staging, { recursive: true, force: true });
        }
        log.info("copied the embedded PostgreSQL binaries where the server user can reach them", {
          from: nativeDir,
          to: target,
          because: `user ${user.name} cannot enter ${blocked}`,
        });
      }
      const still = await firstBlocked(user, join(target, "bin", "postgres"));
      if (!still) return target;
      tried.push(`${target} (user ${user.name} cannot enter ${still})`);
    } catch (err) {
      tried.push(`${target} (${(err as Error).message})`);
    }
  }
  throw new Error(
    `the embedded PostgreSQL runs as user ${user.name}, which cannot enter ${blocked} (${await describeFolder(blocked)}) to reach its binaries in ${nativeDir}, ` +
      `and no copy it can reach could be made: ${tried.join("; ")}`,
  );
}
