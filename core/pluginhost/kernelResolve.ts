/**
 * Module-resolution hook (runs in Node's loader thread): makes the bare
 * specifier "nms-core" resolve to this kernel's public API for every plugin it
 * loads, wherever the plugin is installed, so third-party plugins share the
 * kernel's own classes instead of a second copy.
 */
let target = "";

export function initialize(data: { target: string }): void {
  target = data.target;
}

type Next = (specifier: string, context: unknown) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: unknown, next: Next): Promise<{ url: string; shortCircuit?: boolean }> {
  if (specifier === "nms-core" && target) return { url: target, shortCircuit: true };
  return next(specifier, context);
}
