import { Format, Required, Description } from "@tsed/schema";

@Description("A folder the calling person has pinned (GET /pins).")
export class PinnedFolder {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
}
