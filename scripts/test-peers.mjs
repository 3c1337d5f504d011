// The tests run against real programs from Debian packages (test/peers.json). Without them, jest would fail dozens of
// tests with stack traces that do not say what to install, so npm test and .ci/run call this first: it installs what
// is missing when it may (root, or passwordless sudo, and apt-get), else stops at once with one line naming the
// missing programs and the command that installs them. NMS_TEST_NO_INSTALL=1 only checks.
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const LIST = fileURLToPath(new URL("../test/peers.json", import.meta.url));

function fail(line) {
  process.stderr.write(line + "\n");
  process.exit(1);
}

function loadPeers() {
  try {
    const { packages } = JSON.parse(readFileSync(LIST, "utf8"));
    return Object.entries(packages).map(([pkg, { programs, files = [] }]) => ({ pkg, programs, files }));
  } catch (err) {
    fail(`test peers: cannot read ${LIST}: ${err.message}`);
  }
}

/** PATH, plus the sbin folder beside each bin folder: a non-root PATH often lacks /usr/sbin (snmpd), where the tests look too. */
function searchDirs() {
  const dirs = [];
  for (const dir of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
    dirs.push(dir);
    if (dir.endsWith("/bin")) dirs.push(join(dirname(dir), "sbin"));
  }
  return [...new Set(dirs)];
}

function which(program) {
  for (const dir of searchDirs()) {
    const path = join(dir, program);
    try {
      if (statSync(path).isFile()) {
        accessSync(path, constants.X_OK);
        return path;
      }
    } catch {
      // not here
    }
  }
  return null;
}

function exists(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Per package, the programs not on the PATH and the files (a plugin of a program, say) not there: both are reported as "programs". */
function missingPeers(peers) {
  return peers
    .map(({ pkg, programs, files }) => ({ pkg, programs: [...programs.filter((p) => !which(p)), ...files.filter((f) => !exists(f))] }))
    .filter((m) => m.programs.length > 0);
}

/** The line of apt-get's output that says why it failed (its "E:" lines), else its last line. */
function aptReason(result) {
  if (result.error) return result.error.message;
  const lines = `${result.stdout ?? ""}\n${result.stderr ?? ""}`
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.filter((l) => l.startsWith("E:")).join(" ") || lines.at(-1) || `exit code ${result.status}`;
}

const peers = loadPeers();
const missing = missingPeers(peers);
if (missing.length === 0) process.exit(0);

const packages = missing.map((m) => m.pkg);
const programs = missing.flatMap((m) => m.programs).join(", ");
const asRoot = process.getuid?.() === 0;
const command = `${asRoot ? "" : "sudo "}apt-get install -y ${packages.join(" ")}`;
const stop = (why) => fail(`test peers missing: ${programs} (${why}); install them with: ${command}`);

if (process.env.NMS_TEST_NO_INSTALL === "1") stop("NMS_TEST_NO_INSTALL=1: not installing");
const aptGet = which("apt-get");
if (!aptGet) stop("no apt-get on this machine: install the Debian packages or their equivalents");
let prefix = [];
if (!asRoot) {
  const sudo = which("sudo");
  if (!sudo) stop("not root, and no sudo");
  if (spawnSync(sudo, ["-n", "true"], { stdio: "ignore" }).status !== 0) stop("not root, and sudo asks for a password");
  // sudo resets the environment: the front end is passed through env(1), which it runs as root.
  prefix = [sudo, "-n", "env", "DEBIAN_FRONTEND=noninteractive"];
}

process.stdout.write(`test peers: installing ${packages.join(" ")} with apt-get (missing: ${programs})\n`);
const apt = (args) => {
  const argv = [...prefix, aptGet, ...args];
  return spawnSync(argv[0], argv.slice(1), {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
};
// A failed update (one unreachable mirror, say) need not stop the install: its reason is given only if the install fails.
const update = apt(["update", "-qq"]);
const install = apt(["install", "-y", "-qq", "--no-install-recommends", ...packages]);
if (install.status !== 0) {
  const after = update.status === 0 ? "" : `; apt-get update failed before: ${aptReason(update)}`;
  fail(`test peers: ${command} failed: ${aptReason(install)}${after}`);
}
const still = missingPeers(peers);
if (still.length > 0) {
  fail(`test peers: still missing after apt-get install: ${still.flatMap((m) => m.programs).join(", ")} (does test/peers.json name the right package?)`);
}
