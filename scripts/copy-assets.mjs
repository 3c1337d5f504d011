// tsc compiles only TypeScript: copy the files read at run time (SQL migrations, the API docs page template) into dist/.
import { cpSync, existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const ASSET = /\.(sql|ejs)$/;

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "node_modules" && name !== "test") walk(path);
    } else if (ASSET.test(name)) {
      cpSync(path, join(root, "dist", relative(root, path)));
    }
  }
}

for (const top of ["core", "plugins"]) if (existsSync(join(root, top))) walk(join(root, top));
