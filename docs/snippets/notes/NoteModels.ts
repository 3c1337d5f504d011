// notes/models/NoteModels.ts
import { AdditionalProperties, Format, MaxLength, MinLength, Nullable, Optional, Required } from "nms-core/tsed";

@AdditionalProperties(false) // unknown fields answer 400 instead of being dropped
export class NoteCreate {
  @Required() @MinLength(1) @MaxLength(500) text: string;
  @Optional() @Nullable(String) @Format("uuid") node_id?: string | null;
}

export class NoteView {
  @Required() @Format("uuid") id: string;
  @Required() text: string;
  @Required() @Nullable(String) @Format("uuid") node_id: string | null;
  @Required() @Format("date-time") created_at: string;
}
