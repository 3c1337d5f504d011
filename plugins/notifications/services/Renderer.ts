import { Inject, Injectable } from "@tsed/di";
import type { AlertTransition } from "../../alerts/contract.js";
import { NODE_DIRECTORY_VIEW } from "../../inventory/contract.js";
import { NOTIFICATIONS_CONTEXT, type NotificationsContext } from "../context.js";
import type { ChannelKind, LifecyclePoint, TemplateItem } from "../contract.js";
import { render, type RenderContext } from "../lib/render.js";

/** Renders a channel's subject and body for an alert: the channel's template for that point, else the kind's built-in one. */
@Injectable()
export class Renderer {
  @Inject(NOTIFICATIONS_CONTEXT)
  private ctx: NotificationsContext;

  async render(
    kind: ChannelKind,
    template: Partial<Record<LifecyclePoint, TemplateItem>>,
    event: LifecyclePoint,
    alert: AlertTransition,
    test: boolean,
  ): Promise<{ subject: string; body: string | null }> {
    const item = template[event] ?? kind.builtinTemplates[event];
    const body = item.body ?? kind.builtinTemplates[event].body;
    const context: RenderContext = { alert, node: await this.node(alert.node), event, test };
    return { subject: (await render(item.subject, context)).trim(), body: body === null ? null : await render(body, context) };
  }

  /** The node's name, address and folders, from the view inventory publishes (null when gone or not a node alert). */
  private async node(id: string | null): Promise<RenderContext["node"]> {
    if (!id) return null;
    const { rows } = await this.ctx.store.query<NonNullable<RenderContext["node"]>>(
      `SELECT id, name, host(address) AS address, folder_names FROM ${NODE_DIRECTORY_VIEW} WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }
}
