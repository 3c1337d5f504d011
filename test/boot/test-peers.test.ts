/**
 * scripts/test-peers.mjs, which npm test and .ci/run call before anything else: the PATH given to it decides which
 * programs "are installed", and a stand-in apt-get records what it would install, so the machine is never changed.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SCRIPT = join(ROOT, "scripts/test-peers.mjs");
const peers = JSON.parse(readFileSync(join(ROOT, "test/peers.json"), "utf8")) as { packages: Record<string, { programs: string[]; files?: string[] }> };
// With nothing on the PATH every package naming a program is missing; one that names only files is missing when a file is.
const PACKAGES = Object.entries(peers.packages)
  .filter(([, p]) => p.programs.length > 0 || (p.files ?? []).some((f) => !existsSync(f)))
  .map(([name]) => name);
const PROGRAMS = Object.values(peers.packages).flatMap((p) => p.programs);
const asRoot = process.getuid?.() === 0;

const dirs: string[] = [];
function binDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nms-peers-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function executable(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

function run(path: string, env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [SCRIPT], { env: { PATH: path, ...env }, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderrLines: r.stderr.split("\n").filter(Boolean) };
}

describe("test peers", () => {
  it("check only, nothing on PATH: exits 1 with one line naming every missing program and the install command", () => {
    const r = run(binDir(), { NMS_TEST_NO_INSTALL: "1" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderrLines).toHaveLength(1);
    const [line] = r.stderrLines;
    expect(line).toMatch(/^test peers missing: /);
    for (const p of PROGRAMS) expect(line).toContain(p);
    expect(line).toContain(`${asRoot ? "" : "sudo "}apt-get install -y ${PACKAGES.join(" ")}`);
  });

  it("every program present (in a bin folder or the sbin beside it): exits 0 and prints nothing", () => {
    const root = binDir();
    const [bin, sbin] = [join(root, "bin"), join(root, "sbin")];
    for (const d of [bin, sbin]) mkdirSync(d);
    PROGRAMS.forEach((p, i) => executable(join(i % 2 ? sbin : bin, p), "exit 0"));
    const r = run(bin, { NMS_TEST_NO_INSTALL: "1" });
    expect(r).toEqual({ status: 0, stdout: "", stderrLines: [] });
  });

  it("installs the missing packages with apt-get as root, else stops with one line saying why", () => {
    const dir = binDir();
    const log = join(dir, "apt.log");
    const present = PROGRAMS.slice(1);
    for (const p of present) executable(join(dir, p), "exit 0");
    // The stand-in "installs" by creating the missing program.
    executable(
      join(dir, "apt-get"),
      `echo "$DEBIAN_FRONTEND $*" >> ${log}\n[ "$1" = install ] && printf '#!/bin/sh\\n' > ${dir}/${PROGRAMS[0]} && /bin/chmod +x ${dir}/${PROGRAMS[0]}\nexit 0`,
    );
    const owner = Object.entries(peers.packages).find(([, v]) => v.programs.includes(PROGRAMS[0]))![0];
    const r = run(dir);
    if (asRoot) {
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`test peers: installing ${owner} with apt-get (missing: ${PROGRAMS[0]})\n`);
      expect(r.stderrLines).toEqual([]);
      expect(readFileSync(log, "utf8")).toBe(`noninteractive update -qq\nnoninteractive install -y -qq --no-install-recommends ${owner}\n`);
    } else {
      // No sudo on this PATH: nothing is run.
      expect(r.status).toBe(1);
      expect(r.stderrLines).toEqual([`test peers missing: ${PROGRAMS[0]} (not root, and no sudo); install them with: sudo apt-get install -y ${owner}`]);
    }
  });

  it("a failed install ends in one line quoting apt-get's error (as root; else the one line saying why it is not tried)", () => {
    const dir = binDir();
    executable(join(dir, "apt-get"), `[ "$1" = update ] && exit 0\necho "E: Unable to locate package ${PACKAGES[0]}" >&2\nexit 100`);
    const r = run(dir);
    expect(r.status).toBe(1);
    expect(r.stderrLines).toHaveLength(1);
    if (asRoot) expect(r.stderrLines[0]).toBe(`test peers: apt-get install -y ${PACKAGES.join(" ")} failed: E: Unable to locate package ${PACKAGES[0]}`);
    else expect(r.stderrLines[0]).toMatch(/^test peers missing: .* \(not root, and no sudo\); install them with: sudo apt-get install -y /);
  });
});
