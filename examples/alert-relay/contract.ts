/**
 * What a plugin that lists "alert-relay" in dependsOn may use. This file owns the plugin's public types and tokens and
 * imports none of its services: a token is an abstract class, bound in the manifest's exports to the service that
 * implements it, so a dependant never holds the implementation.
 */

/** The outcome of one post to the chat webhook. */
export interface PostOutcome {
  ok: boolean;
  http_status: number | null;
  /** An HTTP status or an error class: never the URL, which may hold a secret. */
  error: string | null;
}

/** `test(text?)`: posts a message to the configured chat and logs it as a test delivery; null when no webhook is configured. */
export abstract class ChatRelay {
  abstract test(text?: string): Promise<PostOutcome | null>;
}
