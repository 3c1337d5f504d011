/** Characters COPY's text format needs escaped in a value: the escape itself, the delimiter (tab), the row ends. */
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
const copyEscape = (c: string) => COPY_ESCAPES[c];

/**
 * A text value escaped for COPY's text format (NULL, `\N`, is the caller's to write). Its own module: the ingest
 * workers build COPY lines with it (core/worker.ts) without loading the store.
 */
export function copyText(s: string): string {
  return COPY_SPECIAL.test(s) ? s.replace(COPY_SPECIAL_ALL, copyEscape) : s;
}
