/** The section kinds this plugin ships; other plugins add theirs through `reports.sections`. */
import type { ReportSectionKind } from "../contract.js";
import { alertSummarySection } from "./alertSummary.js";
import { availabilitySection } from "./availability.js";
import { eventSummarySection } from "./eventSummary.js";
import { flowTopSection } from "./flowTop.js";
import { inventorySection } from "./inventory.js";
import { topInterfacesSection } from "./topInterfaces.js";

export const BUILTIN_SECTIONS: readonly ReportSectionKind[] = [
  availabilitySection,
  topInterfacesSection,
  alertSummarySection,
  eventSummarySection,
  flowTopSection,
  inventorySection,
];
