// notes/index.ts: the manifest, exported as notesPlugin.
import { definePlugin } from "nms-core";
import { notesConfigSchema } from "./context.js";
import { NoteController } from "./NoteController.js";
import { NoteService } from "./NoteService.js";

export const notesPlugin = definePlugin({
  id: "notes",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Free-text notes on nodes",
  dependsOn: { inventory: "^0.1.0" }, // for its node_directory view
  controllers: [NoteController],
  providers: [NoteService],
  exports: [NoteService], // what plugins depending on "notes" may inject
  migrations: [
    {
      name: "0001_init",
      // Runs with search_path = notes, public: unqualified names land in the plugin's schema.
      up: `CREATE TABLE notes (
             id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
             text text NOT NULL,
             node_id uuid,
             created_at timestamptz NOT NULL DEFAULT now());
           CREATE INDEX notes_recent_idx ON notes (created_at DESC, id DESC);`,
    },
  ],
  jobs: [
    {
      name: "prune", // Agenda job "notes.prune"
      every: "1 hour",
      handler: async (_job, ctx) => {
        const pruned = await ctx.get(NoteService).prune();
        if (pruned) ctx.log.info("old notes pruned", { count: pruned, keepDays: ctx.config.keepDays });
      },
    },
  ],
  channels: [{ name: "live", permission: "read", scoped: true }],
  config: notesConfigSchema, // ctx.config is NotesConfig, everywhere
  start: (ctx) => ctx.log.info("notes ready", { pageSize: ctx.config.pageSize }),
});
