/**
 * `nms plugin new <id>`: writes a third-party plugin package with the layout of examples/alert-relay and
 * docs/plugins.md (its anatomy): its own package.json, tsconfig and build, a context, a contract (a token other plugins
 * inject), a table, a service, a repository, a controller with list and create, and a test on nms-core/testing. It
 * builds and its test passes as written.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { kernelVersion, projectRoot } from "../paths.js";

const ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

const camel = (id: string) => id.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const pascal = (id: string) => camel(id).replace(/^./, (c) => c.toUpperCase());
const constant = (id: string) => id.replace(/-/g, "_").toUpperCase();

export interface ScaffoldOptions {
  id: string;
  /** Folder to create; default ./nms-plugin-<id>. */
  dir?: string;
  /** The nms-core dependency spec; default `file:<this kernel's folder>`. */
  nmsCore?: string;
}

function files(id: string, nmsCore: string, kernel: string): Record<string, string> {
  const C = constant(id);
  const P = pascal(id);
  const c = camel(id);
  return {
    "package.json": JSON.stringify(
      {
        name: `nms-plugin-${id}`,
        version: "0.1.0",
        description: `nms-core plugin ${id}`,
        private: true,
        type: "module",
        exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } },
        files: ["dist"],
        scripts: { build: "tsc -p tsconfig.json && node scripts/copy-migrations.mjs", test: "npm run build && node --test 'dist/test/**/*.test.js'" },
        peerDependencies: { "nms-core": `^${kernel}` },
        devDependencies: { "@types/node": "^24.19.4", "nms-core": nmsCore, typescript: "5.9.3" },
      },
      null,
      2,
    ),
    "tsconfig.json": JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2023"],
          types: ["node"],
          strict: true,
          strictPropertyInitialization: false,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          useDefineForClassFields: false,
          skipLibCheck: true,
          declaration: true,
          sourceMap: true,
          outDir: "dist",
          rootDir: ".",
        },
        include: ["*.ts", "controllers/**/*.ts", "services/**/*.ts", "repositories/**/*.ts", "models/**/*.ts", "test/**/*.ts"],
        exclude: ["node_modules", "dist"],
      },
      null,
      2,
    ),
    ".gitignore": "node_modules/\ndist/\n",
    "scripts/copy-migrations.mjs": `// The service reads a plugin's migrations from beside its compiled modules: copy the .sql files into dist/.
import { cpSync } from "node:fs";

cpSync(new URL("../migrations/", import.meta.url), new URL("../dist/migrations/", import.meta.url), { recursive: true });
`,
    "README.md": `# nms-plugin-${id}

An nms-core plugin. \`npm install && npm test\` builds it and runs its tests against a real kernel and PostgreSQL
(\`nms-core/testing\`). Load it into a service with \`NMS_PLUGINS=/path/to/this/folder npm start\` (run \`npm run build\` here first).

Routes: \`GET /api/v1/${id}/notes\` (read, keyset pagination with \`X-Next-Cursor\`), \`POST /api/v1/${id}/notes\` (ManageConfig).
Configuration: \`pluginConfig.${id}.maxLength\` (default 200). Table: \`${id.replace(/-/g, "_")}.notes\`.
`,
    "migrations/0001_init.sql": `CREATE TABLE notes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX notes_newest ON notes (created_at DESC, id DESC);
`,
    "context.ts": `import { pluginContextToken, type ConfigOf, type PluginContext } from "nms-core";

export const ${c}ConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    /** Longest note accepted. */
    maxLength: { type: "integer", minimum: 1, maximum: 10000, default: 200 },
  },
} as const;

export type ${P}Config = ConfigOf<typeof ${c}ConfigSchema>;
export type ${P}Context = PluginContext<${P}Config>;

export const ${C}_CONTEXT = pluginContextToken("${id}");
`,
    "models/NoteModels.ts": `import { AdditionalProperties, Description, MaxLength, MinLength, Required } from "nms-core/tsed";

@AdditionalProperties(false)
export class NoteBody {
  @Required() @MinLength(1) @MaxLength(10000) text: string;
}

export class NoteView {
  @Required() id: string;
  @Required() text: string;
  @Required() @Description("RFC 3339, microseconds") created_at: string;
}
`,
    "repositories/NoteRepository.ts": `import { isoTimestamp, page } from "nms-core";
import { Inject, Injectable } from "nms-core/tsed";
import { ${C}_CONTEXT, type ${P}Context } from "../context.js";
import type { NoteView } from "../models/NoteModels.js";

/** SQL only. Newest first, keyset by (created_at, id). */
@Injectable()
export class NoteRepository {
  @Inject(${C}_CONTEXT)
  private ctx: ${P}Context;

  async insert(text: string): Promise<string> {
    const { rows } = await this.ctx.store.query<{ id: string }>(\`INSERT INTO \${this.ctx.store.table("notes")} (text) VALUES ($1) RETURNING id\`, [text]);
    return rows[0].id;
  }

  async list(limit: number, after: readonly [string, string] | null): Promise<{ rows: NoteView[]; next: string | null }> {
    const { rows } = await this.ctx.store.query<NoteView>(
      \`SELECT id, text, \${isoTimestamp("created_at")} AS created_at FROM \${this.ctx.store.table("notes")}
        WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::uuid)
        ORDER BY created_at DESC, id DESC LIMIT $3\`,
      [after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
    return page(rows, limit, (r) => [r.created_at, r.id]);
  }
}
`,
    "contract.ts": `/**
 * What a plugin that lists "${id}" in dependsOn may use: this file owns the plugin's public types and tokens and imports
 * none of its services. A token is an abstract class; the manifest's exports bind it to the service that implements it.
 */

/** \`create(text)\`: adds a note and answers its id (400 note_too_long past the configured length). */
export abstract class ${P}Notes {
  abstract create(text: string): Promise<string>;
}
`,
    "services/NoteService.ts": `import { badRequest, decodeCursor, isRfc3339, isUuid } from "nms-core";
import { Inject, Injectable } from "nms-core/tsed";
import { ${C}_CONTEXT, type ${P}Context } from "../context.js";
import type { ${P}Notes } from "../contract.js";
import type { NoteView } from "../models/NoteModels.js";
import { NoteRepository } from "../repositories/NoteRepository.js";

/** The logic: the configured length limit, and cursors checked before they reach SQL. */
@Injectable()
export class NoteService implements ${P}Notes {
  @Inject(${C}_CONTEXT)
  private ctx: ${P}Context;

  @Inject(NoteRepository)
  private repo: NoteRepository;

  async create(text: string): Promise<string> {
    if (text.length > this.ctx.config.maxLength) throw badRequest("note_too_long", \`A note has at most \${this.ctx.config.maxLength} characters.\`);
    return this.repo.insert(text);
  }

  list(limit: number, cursor?: string): Promise<{ rows: NoteView[]; next: string | null }> {
    // A cursor part that would fail its SQL cast is refused here (400 invalid_cursor), never answered with a 500.
    const after = cursor ? decodeCursor(cursor, 2, ([at, id]) => isRfc3339(at) && isUuid(id)) : null;
    return this.repo.list(limit, after as [string, string] | null);
  }
}
`,
    "controllers/NoteController.ts": `import { Body, CreatedId, ErrorEnvelope, Permission, ReturnsPage, sendPage } from "nms-core";
import { Context, Controller, Get, Inject, Integer, Maximum, MaxLength, Minimum, Post, QueryParams, Returns, Status, Summary, type PlatformContext } from "nms-core/tsed";
import { NoteBody, NoteView } from "../models/NoteModels.js";
import { NoteService } from "../services/NoteService.js";

@Controller("/${id}/notes")
export class NoteController {
  @Inject(NoteService)
  private notes: NoteService;

  @Get("/")
  @Permission("read")
  @Summary("Notes, newest first (keyset pagination)")
  @ReturnsPage(NoteView)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, invalid_cursor"))
  async list(
    @Context() ctx: PlatformContext,
    @QueryParams("limit") @Integer() @Minimum(1) @Maximum(1000) limit: number = 100,
    @QueryParams("cursor") @MaxLength(2048) cursor?: string,
  ): Promise<NoteView[]> {
    return sendPage(ctx, await this.notes.list(limit, cursor));
  }

  @Post("/")
  @Permission("ManageConfig")
  @Summary("Add a note")
  @Status(201, CreatedId)
  @(Returns(400, ErrorEnvelope).Description("validation_failed, note_too_long"))
  async create(@Body() body: NoteBody): Promise<CreatedId> {
    const id = await this.notes.create(body.text);
    return { id };
  }
}
`,
    "index.ts": `import { definePlugin, sqlMigrationsFrom } from "nms-core";
import { ${c}ConfigSchema } from "./context.js";
import { NoteController } from "./controllers/NoteController.js";
import { NoteRepository } from "./repositories/NoteRepository.js";
import { NoteService } from "./services/NoteService.js";
import { ${P}Notes } from "./contract.js";

export * from "./contract.js";
export type { ${P}Config } from "./context.js";

export const ${c}Plugin = definePlugin({
  id: "${id}",
  version: "0.1.0",
  kernel: "^${kernel}",
  description: "Notes, as a starting point",
  controllers: [NoteController],
  providers: [NoteService, NoteRepository],
  // Dependants inject the contract's token; the class that implements it stays private.
  exports: [{ provide: ${P}Notes, use: NoteService }],
  migrations: sqlMigrationsFrom(new URL("./migrations/", import.meta.url)),
  config: ${c}ConfigSchema,
});
`,
    "test/plugin.test.ts": `import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { definePlugin } from "nms-core";
import { startTestKernel, type TestKernel } from "nms-core/testing";
import { ${P}Notes, ${c}Plugin } from "../index.js";

// A plugin that depends on this one, as a neighbour would: it reaches the notes through the contract's token.
const neighbour = definePlugin({ id: "${id}-neighbour", version: "0.1.0", kernel: "^${kernel}", dependsOn: { "${id}": "^0.1.0" } });

let k: TestKernel;

before(async () => {
  k = await startTestKernel({ plugins: [${c}Plugin, neighbour], overrides: { pluginConfig: { "${id}": { maxLength: 20 } } } });
});

after(async () => {
  await k?.stop();
});

describe("${id}", () => {
  it("adds notes and lists them newest first, page by page", async () => {
    for (const text of ["first", "second", "third"]) assert.equal((await k.request("POST", "/${id}/notes", { body: { text } })).status, 201);
    const first = await k.request("GET", "/${id}/notes?limit=2");
    assert.deepEqual((first.body as { text: string }[]).map((n) => n.text), ["third", "second"]);
    const next = await k.request("GET", \`/${id}/notes?limit=2&cursor=\${first.headers.get("x-next-cursor")}\`);
    assert.deepEqual((next.body as { text: string }[]).map((n) => n.text), ["first"]);
  });

  it("answers 400 with the envelope for bad input, and honours its config", async () => {
    const long = await k.request("POST", "/${id}/notes", { body: { text: "x".repeat(21) } });
    assert.equal(long.status, 400);
    assert.equal((long.body as { error: { code: string } }).error.code, "note_too_long");
    const blank = await k.request("POST", "/${id}/notes", { body: { text: "" } });
    assert.equal((blank.body as { error: { code: string } }).error.code, "validation_failed");
    const cursor = await k.request("GET", "/${id}/notes?cursor=bm9wZQ");
    assert.equal((cursor.body as { error: { code: string } }).error.code, "invalid_cursor");
  });

  it("lets a plugin that depends on it add notes through its contract", async () => {
    const notes = k.kernel.context("${id}-neighbour")!.get(${P}Notes);
    const noteId = await notes.create("from next door");
    const listed = await k.request("GET", "/${id}/notes?limit=1");
    assert.deepEqual((listed.body as { id: string; text: string }[]).map((n) => [n.id, n.text]), [[noteId, "from next door"]]);
  });

  it("asks for a token, and ManageConfig to write", async () => {
    assert.equal((await k.request("GET", "/${id}/notes", { token: null })).status, 401);
    const viewer = await k.token("viewer");
    assert.equal((await k.request("GET", "/${id}/notes", { token: viewer })).status, 200);
    assert.equal((await k.request("POST", "/${id}/notes", { token: viewer, body: { text: "no" } })).status, 403);
  });
});
`,
  };
}

/** Writes the package; returns the folder. Throws (a sentence) on a bad id or a folder that already exists. */
export function scaffoldPlugin(options: ScaffoldOptions): string {
  const { id } = options;
  if (!ID.test(id) || id.length > 40) throw new Error(`plugin id "${id}" must be kebab-case (a-z, 0-9, dashes), at most 40 characters`);
  const dir = resolve(options.dir ?? `nms-plugin-${id}`);
  if (existsSync(dir)) throw new Error(`${dir} already exists`);
  const nmsCore = options.nmsCore ?? `file:${projectRoot()}`;
  for (const [path, text] of Object.entries(files(id, nmsCore, kernelVersion()))) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text.endsWith("\n") ? text : text + "\n");
  }
  return dir;
}
