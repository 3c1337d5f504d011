import { Format, Required } from "@tsed/schema";

export class PinnedFolder {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
}
