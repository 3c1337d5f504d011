/** base_url rules: an https URL without credentials, query or fragment; its origin is what the stored token is bound to. */

/** Why `text` is not a usable base_url, or null. */
export function baseUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "base_url is not a URL.";
  }
  if (url.protocol !== "https:") return "base_url must be an https URL (the token is never sent in clear).";
  if (url.username || url.password) return "base_url must not carry a user name or password.";
  if (url.search || url.hash || text.includes("?") || text.includes("#")) return "base_url must not carry a query or a fragment.";
  return null;
}

/** scheme://host:port with the default port spelt out, host lower-cased: two URLs with the same origin key reach the same server. */
export function originKey(text: string): string {
  const url = new URL(text);
  const port = url.port || (url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : "");
  return `${url.protocol}//${url.hostname.toLowerCase()}:${port}`;
}

/** The URL of an API path under base_url ("/api/ipam/prefixes/"), keeping base_url's own path prefix. */
export function apiUrl(baseUrl: string, path: string): URL {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  base.pathname = `${prefix}${path}`;
  return base;
}
