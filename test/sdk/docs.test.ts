import { readFileSync } from "node:fs";
import { join } from "node:path";
import { notesPlugin } from "../../docs/snippets/notes/index.js";
import { NoteService } from "../../docs/snippets/notes/NoteService.js";
import { inventoryPlugin } from "../../plugins/inventory/index.js";
import { rawQuery } from "../support/db.js";
import { ROOT } from "../support/spawnKernel.js";
import { startTestKernel, type TestKernel } from "../support/testKernel.js";

/** Every TypeScript or JavaScript block of a document, with the snippet file the comment before it names. */
function codeBlocks(doc: string): { lang: string; code: string; snippet: string | null; line: number }[] {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const blocks = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    if (!["ts", "typescript", "js", "javascript"].includes(m[1])) continue;
    const before = text.slice(0, m.index).trimEnd().split("\n").pop() ?? "";
    const snippet = /^<!-- snippet: (\S+) -->$/.exec(before)?.[1] ?? null;
    blocks.push({ lang: m[1], code: m[2], snippet, line: text.slice(0, m.index).split("\n").length });
  }
  return blocks;
}

describe("docs/plugins.md", () => {
  const blocks = codeBlocks("docs/plugins.md");

  it("shows only code that CI compiles and runs: each block is a file of the repository, as it is", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    for (const b of blocks) {
      expect({ line: b.line, snippet: b.snippet }).toEqual({ line: b.line, snippet: expect.stringMatching(/^(docs\/snippets\/|test\/fixtures\/)/) });
      expect({ file: b.snippet, code: b.code }).toEqual({ file: b.snippet, code: readFileSync(join(ROOT, b.snippet!), "utf8") });
    }
  });
});

describe("the documentation's example plugin", () => {
  let k: TestKernel;
  beforeAll(async () => {
    k = await startTestKernel({ plugins: [inventoryPlugin, notesPlugin], overrides: { pluginConfig: { notes: { pageSize: 2 } } } });
  });
  afterAll(() => k?.stop());

  it("adds notes on nodes, lists them within the caller's scope, and refuses an unknown node", async () => {
    const folder = (await k.request("POST", "/node-groups", { body: { name: "east" } })).body as { id: string };
    const node = (await k.request("POST", "/nodes", { body: { name: "edge-1", address: "10.30.0.1", group_id: folder.id } })).body as { id: string };
    expect((await k.request("POST", "/notes", { token: await k.token("operator"), body: { text: "swap PSU", node_id: node.id } })).status).toBe(201);
    expect((await k.request("POST", "/notes", { body: { text: "unfiled" } })).status).toBe(201);
    const all = await k.request("GET", "/notes", { token: await k.token("viewer") });
    expect((all.body as { text: string }[]).map((n) => n.text)).toEqual(["unfiled", "swap PSU"]);
    const scoped = await k.request("GET", "/notes", { token: await k.token("viewer", { folders: [folder.id] }) });
    expect((scoped.body as { text: string }[]).map((n) => n.text)).toEqual(["swap PSU"]);
    const unknown = await k.request("POST", "/notes", { body: { text: "x", node_id: "6f1c0a52-3b8e-4f7d-9a41-2c5e8b7d9f10" } });
    expect(unknown.status).toBe(400);
    expect((unknown.body as { error: { code: string } }).error.code).toBe("unknown_reference");
  });

  it("reaches its service through the context, with its typed config", async () => {
    await rawQuery(k.databaseUrl!, "UPDATE notes.notes SET created_at = now() - interval '40 days' WHERE text = 'unfiled'");
    const ctx = k.kernel.context("notes")!;
    expect(ctx.config).toEqual({ keepDays: 30, pageSize: 2 });
    expect(await ctx.get(NoteService).prune()).toBe(1);
  });
});
