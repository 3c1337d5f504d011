/**
 * Polls `fn` (every 250 ms) until it gives a truthy value, and returns it; fails after `timeoutMs`
 * naming what was awaited, with `detail()` (for example a child process's output) appended.
 */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 25000, detail?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const v = await fn();
    if (v) return v;
    last = v;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})${detail ? `\n${detail()}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
