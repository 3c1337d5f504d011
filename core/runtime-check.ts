import { runtimeProblem } from "./runtime.js";

// Imported first by every entry point (main.ts, cli/main.ts): ES modules evaluate their imports in order, so this runs
// before any dependency that a wrong Node major could break on import.
const problem = runtimeProblem(process.versions.node, process.execPath);
if (problem) {
  process.stderr.write(problem + "\n");
  process.exit(1);
}
