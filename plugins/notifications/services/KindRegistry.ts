import { Inject, Injectable } from "@tsed/di";
import { Ajv, type ValidateFunction } from "ajv";
import { badRequest } from "../../../core/index.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import { CHANNEL_KINDS_POINT, type ChannelKind } from "../contract.js";
import { BUILTIN_KINDS } from "../kinds/index.js";

/** The channel kinds: the built-in ones and those other plugins contribute to `notifications.kinds`. */
@Injectable()
export class KindRegistry {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  private kinds?: Map<string, { kind: ChannelKind; check: ValidateFunction }>;

  private all(): Map<string, { kind: ChannelKind; check: ValidateFunction }> {
    if (!this.kinds) {
      const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
      this.kinds = new Map();
      for (const kind of [...BUILTIN_KINDS, ...this.ctx.extensions.get<ChannelKind>(CHANNEL_KINDS_POINT)]) {
        this.kinds.set(kind.kind, { kind, check: ajv.compile(kind.configSchema) });
      }
    }
    return this.kinds;
  }

  list(): ChannelKind[] {
    return [...this.all().values()].map((k) => k.kind).sort((a, b) => a.kind.localeCompare(b.kind));
  }

  /** The kind, or 400 unknown_channel_kind. */
  get(kind: string): ChannelKind {
    const found = this.all().get(kind);
    if (!found) throw badRequest("unknown_channel_kind", `kind must be one of ${[...this.all().keys()].sort().join(", ")}.`);
    return found.kind;
  }

  /** Fills in the schema's defaults; 400 invalid_channel_config naming the fields (never their values). */
  checkConfig(kind: ChannelKind, config: Record<string, unknown>): Record<string, unknown> {
    const copy = structuredClone(config);
    const check = this.all().get(kind.kind)!.check;
    if (!check(copy)) {
      const why = (check.errors ?? []).map((e) => `config${e.instancePath.replace(/\//g, ".")} ${e.message}`).join("; ");
      throw badRequest("invalid_channel_config", `The ${kind.kind} config is not valid: ${why}.`);
    }
    try {
      kind.validate?.(copy);
    } catch (err) {
      throw badRequest("invalid_channel_config", (err as Error).message);
    }
    return copy;
  }
}

/** What the manifest's extension point checks of a contributed kind, at boot. */
export function validateKind(item: unknown): void {
  const k = item as Partial<ChannelKind> | null;
  if (!k || typeof k.kind !== "string" || !/^[a-z][a-z0-9-]{0,63}$/.test(k.kind)) throw new Error("a channel kind needs a lower-case `kind` name");
  if (BUILTIN_KINDS.some((b) => b.kind === k.kind)) throw new Error(`kind "${k.kind}" is built in`);
  if (typeof k.send !== "function" || typeof k.configSchema !== "object" || !Array.isArray(k.secretFields) || !k.builtinTemplates)
    throw new Error(`kind "${k.kind}" needs configSchema, secretFields, builtinTemplates and send()`);
}
