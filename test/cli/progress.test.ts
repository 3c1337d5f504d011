/**
 * The progress the CLI draws on a terminal, as units: what a bar shows for a sweep, a report run and a bundle, and that
 * nothing is drawn where stderr is no terminal (a pipe, a file: what scripts and the other CLI tests see).
 */
import { PassThrough } from "node:stream";
import { progressBar, reportProgress, sweepProgress } from "../../core/cli/progress.js";

describe("progress", () => {
  it("a sweep: probed of total while it runs, all of it once done", () => {
    expect(sweepProgress({ status: "queued", total: 254, probed: 0 })).toEqual({ value: 0, total: 254 });
    expect(sweepProgress({ status: "running", total: 254, probed: 100 })).toEqual({ value: 100, total: 254 });
    expect(sweepProgress({ status: "running", total: 4, probed: 9 })).toEqual({ value: 4, total: 4 });
    expect(sweepProgress({ status: "done", total: 254, probed: 250 })).toEqual({ value: 254, total: 254 });
    expect(sweepProgress({ status: "failed", total: 254, probed: 17 })).toEqual({ value: 17, total: 254 });
  });

  it("a report run: two steps, rendering then finished", () => {
    expect(["queued", "running", "succeeded", "failed", "unknown"].map((s) => reportProgress(s).value)).toEqual([0, 1, 2, 2, 0]);
    expect(reportProgress("running").total).toBe(2);
  });

  it("draws nothing on a stream that is no terminal", () => {
    const stream = new PassThrough() as unknown as NodeJS.WriteStream;
    const written: Buffer[] = [];
    (stream as unknown as PassThrough).on("data", (c: Buffer) => written.push(c));
    const bar = progressBar("bundle import", stream);
    bar.update(1, 3, "nodes");
    bar.update(3, 3, "thresholds");
    bar.stop();
    expect(Buffer.concat(written).length).toBe(0);
  });
});
