/**
 * The built-in templates (liquid). Node, pool and cloud-organization alerts each have their own wording. Email and
 * servicedesk subjects name the node; webhook and pager subjects carry its id (their body is the whole alert as JSON).
 * The rendering context: `alert` (the transition), `node` ({id, name, address, folder_names} or null), `event`, `test`.
 */
import type { LifecyclePoint, TemplateItem } from "../contract.js";

const WHAT: Record<LifecyclePoint, string> = { fire: "", resolve: "RESOLVED ", suppress: "SUPPRESSED " };

/** "[CRITICAL] core-sw1: CPU load above 90%…" (node), "[CRITICAL] poller pool east unreachable", "[WARNING] cloud organization Acme: …". */
function namedSubject(point: LifecyclePoint): string {
  return (
    `[${WHAT[point]}{{ alert.severity | upcase }}] ` +
    `{% if alert.subject_kind == "pool" %}poller pool {{ alert.subject_name }} unreachable` +
    `{% elsif alert.subject_kind == "netcloud_org" %}cloud organization {{ alert.subject_name }}: {{ alert.title }}` +
    `{% else %}{{ node.name | default: alert.subject_name | default: alert.node }}: {{ alert.title }}{% endif %}`
  );
}

/** The same with the node's id instead of its name (machine receivers key on it). */
function idSubject(point: LifecyclePoint): string {
  return (
    `[${WHAT[point]}{{ alert.severity | upcase }}] ` +
    `{% if alert.subject_kind == "pool" %}poller pool {{ alert.subject_name }} unreachable` +
    `{% elsif alert.subject_kind == "netcloud_org" %}cloud organization {{ alert.subject_name }}: {{ alert.title }}` +
    `{% else %}{{ alert.title }} (node {{ alert.node }}){% endif %}`
  );
}

const TEXT_BODY = [
  "{{ alert.title }}",
  '{% if alert.subject_kind == "node" %}Node: {{ node.name | default: alert.node }}{% if node.address %} ({{ node.address }}){% endif %}',
  '{% if node.folder_names.size > 0 %}Folder: {{ node.folder_names | join: " / " }}\n{% endif %}{% elsif alert.subject_kind == "pool" %}Poller pool: {{ alert.subject_name }}',
  "{% else %}Cloud organization: {{ alert.subject_name }}",
  "{% endif %}Severity: {{ alert.severity }} (state {{ alert.state }})",
  "Check: {{ alert.check }}{% if alert.metric %}, metric {{ alert.metric }}{% endif %}{% if alert.if_name %}, interface {{ alert.if_name }}{% endif %}",
  "{% if alert.observed_value != nil %}Observed: {{ alert.observed_value }}{% if alert.threshold_value != nil %} (threshold {{ alert.threshold_value }}){% endif %}\n{% endif %}At: {{ alert.recorded_at }}",
  "Incident: {{ alert.incident_key }}",
].join("\n");

/** Built-in items for kinds whose subject names the node and whose body is text (email, servicedesk). */
export function namedTextTemplates(): Record<LifecyclePoint, TemplateItem> {
  return {
    fire: { subject: namedSubject("fire"), body: TEXT_BODY },
    resolve: { subject: namedSubject("resolve"), body: TEXT_BODY },
    suppress: { subject: namedSubject("suppress"), body: TEXT_BODY },
  };
}

/** Built-in items for kinds whose subject carries the node's id and whose body is the alert as JSON (webhook, pager). */
export function idJsonTemplates(): Record<LifecyclePoint, TemplateItem> {
  return {
    fire: { subject: idSubject("fire"), body: null },
    resolve: { subject: idSubject("resolve"), body: null },
    suppress: { subject: idSubject("suppress"), body: null },
  };
}
