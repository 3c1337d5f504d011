import type { ChannelKind } from "../contract.js";
import { emailKind } from "./email.js";
import { pagerKind } from "./pager.js";
import { servicedeskKind } from "./servicedesk.js";
import { webhookKind } from "./webhook.js";

/** The kinds this plugin brings; others come through the `notifications.kinds` extension point. */
export const BUILTIN_KINDS: readonly ChannelKind[] = [webhookKind, emailKind, pagerKind, servicedeskKind];
