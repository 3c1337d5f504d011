import cliProgress from "cli-progress";

/** A progress display: `update` with how far the work is, `stop` when it ends (either way). */
export interface Progress {
  update(value: number, total: number, what?: string): void;
  stop(): void;
}

const SILENT: Progress = { update: () => undefined, stop: () => undefined };

/**
 * A bar on stderr while stderr is a terminal; nothing at all otherwise, so scripts, pipes and tests see only the
 * command's own output. stdout stays free for results (JSON, a bundle written to "-").
 */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return SILENT;
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} {what}`, stream, hideCursor: true, clearOnComplete: false, etaBuffer: 20 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(value, total, what = "") {
      if (!started) {
        bar.start(total, value, { what });
        started = true;
        return;
      }
      bar.setTotal(total);
      bar.update(value, { what });
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}

/** How far a discovery sweep is: addresses probed of the range's total (all of it once it is done). */
export function sweepProgress(sweep: { status: string; total: number; probed: number }): { value: number; total: number } {
  const total = Math.max(sweep.total, 0);
  if (sweep.status === "done") return { value: total, total };
  return { value: Math.min(Math.max(sweep.probed, 0), total), total };
}

/** How far a report run is, in steps: queued 0, running 1, finished (succeeded or failed) 2, of 2. */
export function reportProgress(status: string): { value: number; total: number } {
  const steps: Record<string, number> = { queued: 0, running: 1, succeeded: 2, failed: 2 };
  return { value: steps[status] ?? 0, total: 2 };
}
