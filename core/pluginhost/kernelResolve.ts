/**
 * Module-resolution hooks (run in Node's loader thread) for plugins loaded from
 * outside this package:
 * - "nms-core" and its subpaths resolve to this kernel's public API, so plugins
 *   share the kernel's own classes instead of a second copy;
 * - a bare specifier the plugin cannot resolve itself (its peer dependencies:
 *   "@tsed/di", "@tsed/schema", ...) is resolved from the kernel's own folder,
 *   so the host provides them exactly once.
 */
let target = "";

export function initialize(data: { target: string }): void {
  target = data.target;
}

interface Context {
  parentURL?: string;
}
type Next = (specifier: string, context: Context) => Promise<{ url: string }>;

const BARE = /^(?![./]|[a-z]+:)/i;

export async function resolve(specifier: string, context: Context, next: Next): Promise<{ url: string; shortCircuit?: boolean }> {
  if (specifier === "nms-core" && target) return { url: target, shortCircuit: true };
  // nms-core/bus, nms-core/tsed, nms-core/testing, nms-core/contracts/<id>: through the host package's own exports.
  if (specifier.startsWith("nms-core/") && target) return { ...(await next(specifier, { ...context, parentURL: target })), shortCircuit: true };
  try {
    return await next(specifier, context);
  } catch (err) {
    if (!target || !BARE.test(specifier) || (err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw err;
    return next(specifier, { ...context, parentURL: target });
  }
}
