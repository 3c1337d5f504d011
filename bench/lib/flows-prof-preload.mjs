// Preloaded into the service by bench/flows-throughput.mjs (BENCH_CPU_PROF=dir; NODE_OPTIONS=--import this file): a V8
// CPU profile of the whole run and its event-loop delay (p50/p99/max), written to $BENCH_CPU_PROF/service-<pid>.cpuprofile when the process gets SIGUSR2.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();

const session = new Session();
session.connect();
session.post("Profiler.enable", () => session.post("Profiler.setSamplingInterval", { interval: 500 }, () => session.post("Profiler.start")));
process.on("SIGUSR2", () => {
  session.post("Profiler.stop", (err, res) => {
    if (!err) writeFileSync(join(process.env.BENCH_CPU_PROF, `service-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    const ms = (ns) => Math.round(ns / 1e6);
    const loop = { p50_ms: ms(delay.percentile(50)), p99_ms: ms(delay.percentile(99)), max_ms: ms(delay.max) };
    writeFileSync(join(process.env.BENCH_CPU_PROF, `service-${process.pid}.loop.json`), JSON.stringify(loop));
  });
});
