/**
 * Templates are liquid (liquidjs) with limits: own properties only (no prototype access), a render-time and an
 * output-size cap, no file system. A template that does not parse is refused when it is saved.
 */
import { Liquid } from "liquidjs";
import type { AlertTransition } from "../../alerts/contract.js";
import type { LifecyclePoint } from "../contract.js";

export interface RenderContext {
  alert: AlertTransition;
  node: { id: string; name: string; address: string; folder_names: string[] } | null;
  event: LifecyclePoint;
  test: boolean;
}

/** Most characters a rendered subject or body may have, and the render-time cap. */
export const RENDER_LIMITS = { outputChars: 65536, renderMs: 200, parseChars: 16384 } as const;

const engine = new Liquid({
  ownPropertyOnly: true,
  strictFilters: true,
  renderLimit: RENDER_LIMITS.renderMs,
  memoryLimit: 4 * RENDER_LIMITS.outputChars,
  parseLimit: RENDER_LIMITS.parseChars,
  // No partials or layouts: templates come from API users, not from disk.
  relativeReference: false,
  root: [],
  partials: [],
  layouts: [],
});

/** Throws an Error (a sentence) when `template` does not parse. */
export function checkTemplate(template: string): void {
  engine.parse(template);
}

export async function render(template: string, ctx: RenderContext): Promise<string> {
  const out = await engine.parseAndRender(template, ctx as unknown as Record<string, unknown>);
  return out.length > RENDER_LIMITS.outputChars ? out.slice(0, RENDER_LIMITS.outputChars) : out;
}
