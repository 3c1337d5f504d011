// notes/context.ts: the config schema (the one source of the config type) and the context token, written once.
import { pluginContextToken, type ConfigOf, type PluginContext } from "nms-core";

export const notesConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    keepDays: { type: "integer", minimum: 1, default: 30 },
    pageSize: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
  },
} as const;

export type NotesConfig = ConfigOf<typeof notesConfigSchema>; // { keepDays: number; pageSize: number }
export type NotesContext = PluginContext<NotesConfig>;

export const NOTES_CONTEXT = pluginContextToken("notes");
