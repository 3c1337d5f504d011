// The alert console, mutes and maintenance, accounts, and the node view's "Mute / Maintenance" card, loaded on first
// use (their own chunks) so the first page load does not grow with screens most visits never open.
import { lazy } from "./lazy.tsx";

export const AlertsConsole = lazy(
  () => import("./views/Alerts.tsx"),
  (m) => m.AlertsConsole,
);
export const MutesMaintenance = lazy(
  () => import("./views/Alerts.tsx"),
  (m) => m.MutesMaintenance,
);
export const Accounts = lazy(
  () => import("./views/Accounts.tsx"),
  (m) => m.Accounts,
);
export const NodeAlertActions = lazy(
  () => import("./alertActions.tsx"),
  (m) => m.NodeAlertActions,
);
