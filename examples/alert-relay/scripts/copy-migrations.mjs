// The service reads a plugin's migrations from beside its compiled modules: copy the .sql files into dist/.
import { cpSync } from "node:fs";

cpSync(new URL("../migrations/", import.meta.url), new URL("../dist/migrations/", import.meta.url), { recursive: true });
