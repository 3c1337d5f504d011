import { Controller } from "@tsed/di";

// Scaffold: routes are being written (issue 5); a controller without routes mounts nothing.
@Controller("/")
export class HistoryController {}
