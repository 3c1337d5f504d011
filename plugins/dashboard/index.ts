import { definePlugin } from "../../core/index.js";
import { DASHBOARD_CSP, webAppDir } from "./lib/assets.js";

const dir = webAppDir();

/**
 * The live dashboard: a single-page web app (plugins/dashboard/web, built by `npm run build` with vite into
 * dist/plugins/dashboard/web) served at / and /ui/. It talks to the service as any client does, through the typed
 * client (clients/typescript) and Socket.IO, so it sees exactly what the signed-in account's role and folder scope allow.
 * It also adds `nms api <METHOD> <route> [json]` to the CLI.
 */
export const dashboardPlugin = definePlugin({
  id: "dashboard",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Live web dashboard at / and /ui/, and the nms api command",
  staticAssets: [
    { mount: "/", dir, fallback: "index.html", htmlHeaders: { "Content-Security-Policy": DASHBOARD_CSP, "Referrer-Policy": "no-referrer" } },
    { mount: "/ui", dir, fallback: "index.html", htmlHeaders: { "Content-Security-Policy": DASHBOARD_CSP, "Referrer-Policy": "no-referrer" } },
  ],
  commands: {
    // Loaded on use only: the server never needs the CLI's client.
    api: {
      description: "call the REST API: nms api <METHOD> <route> [json] (NMS_URL, NMS_TOKEN)",
      run: async (argv, env) => (await import("./lib/apiCommand.js")).apiCommand.run(argv, env),
    },
  },
});
