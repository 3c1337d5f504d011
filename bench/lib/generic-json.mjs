// Preloaded into a service by bench/http-profile.mjs (BENCH_AB=1) with `--import`: switches off the compiled JSON mapping
// of FastJson routes (core/http/fastJson.ts), so every answer goes through Ts.ED's json-mapper as before it: the "before"
// side of an A/B run on the same data, in the same minutes. The module is the one the kernel imports (same URL).
import { setFastJsonEnabled } from "../../dist/core/http/fastJson.js";

setFastJsonEnabled(false);
