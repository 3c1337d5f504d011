#!/usr/bin/env node
import "../runtime-check.js";
import { parseArgs } from "node:util";
import { AuthService, validateScope } from "../auth/AuthService.js";
import { ROLES, type Role, type Scope } from "../auth/Caller.js";
import { randomPassword } from "../auth/passwords.js";
import { ConfigError, loadConfig } from "../config/Config.js";
import { ApiError } from "../errors.js";
import { commandEnvironment } from "../kernel/Kernel.js";
import type { CommandDeclaration, CommandEnvironment } from "../pluginhost/manifest.js";
import { JsonLogger } from "../logging/Logger.js";
import { coreMigrations } from "../store/coreMigrations.js";
import { EmbeddedServer } from "../store/EmbeddedServer.js";
import { migratePlugin } from "../store/Migrator.js";
import { createPool, Store } from "../store/Store.js";
import { scaffoldPlugin } from "./scaffold.js";
import { BUNDLE_USAGE, BundleUsageError, bundleCommand } from "../bundle/cli.js";

const USAGE = `Usage: nms <command> [options]   (npm run nms -- <command> [options])

Offline administration on the configured store (DATABASE_URL, or the embedded
PostgreSQL in NMS_DATA_DIR; the service must not be running on that data dir).

  accounts create --username U --role viewer|operator|admin [--password P] [--scope JSON]
  accounts list
  tokens create --name N --role viewer|operator|admin [--scope JSON] [--expires-at RFC3339]
  tokens list
  plugin new <id> [--dir DIR] [--nms-core SPEC]   write a plugin package to start from (no store needed)
${BUNDLE_USAGE}
  <plugin command> ...   commands of the loaded plugins (e.g. poller)

--scope is "All" (default) or '{"folders":["<uuid>",...]}'. Without --password a
random password is generated and printed once. A token is printed once.`;

function fail(message: string): never {
  process.stderr.write(`nms: ${message}\n`);
  process.exit(2);
}

function role(value: string | undefined): Role {
  if (!value || !(ROLES as readonly string[]).includes(value)) fail(`--role must be one of ${ROLES.join(", ")}`);
  return value as Role;
}

function scope(value: string | undefined): Scope {
  if (value === undefined || value === "All") return "All";
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    fail('--scope must be All or JSON like {"folders":["<uuid>"]}');
  }
  try {
    validateScope(parsed);
  } catch (err) {
    fail((err as Error).message);
  }
  return parsed as Scope;
}

async function withStore<T>(fn: (auth: AuthService) => Promise<T>): Promise<T> {
  const config = loadConfig();
  if (config.mode === "skeleton") fail("skeleton mode has no store: accounts come only from NMS_BOOTSTRAP_TOKEN");
  const log = new JsonLogger("warn", "cli", (line) => process.stderr.write(line + "\n"));
  let embedded: EmbeddedServer | null = null;
  let url = config.databaseUrl;
  if (!url) {
    embedded = new EmbeddedServer(config.dataDir, log);
    url = (await embedded.start()).url;
  }
  const store = new Store(createPool(url, (err) => log.warn("database connection lost", { error: err.message }), 2));
  try {
    await migratePlugin(store, "core", coreMigrations, log);
    return await fn(new AuthService(store, config, log));
  } finally {
    await store.close();
    await embedded?.stop();
  }
}

/** Finds a CLI command among the built-in and configured plugins, with the environment it runs in. */
async function pluginCommand(name: string): Promise<{ command: CommandDeclaration; env: CommandEnvironment } | undefined> {
  const { plugins, env } = await commandEnvironment(loadConfig());
  const command = plugins.map((p) => p.manifest.commands?.[name]).find(Boolean);
  return command ? { command, env } : undefined;
}

async function main(argv: string[]): Promise<void> {
  const [noun, verb, ...rest] = argv;
  if (!noun || noun === "help" || noun === "--help") {
    process.stdout.write(USAGE + "\n");
    return;
  }
  if (noun === "plugin") {
    if (verb !== "new") fail(`unknown command "plugin ${verb ?? ""}": did you mean "plugin new <id>"?`);
    const { values, positionals } = parseArgs({ args: rest, options: { dir: { type: "string" }, "nms-core": { type: "string" } }, allowPositionals: true });
    if (positionals.length !== 1) fail("plugin new takes one plugin id, e.g. nms plugin new ticket-sync");
    let dir: string;
    try {
      dir = scaffoldPlugin({ id: positionals[0], dir: values.dir, nmsCore: values["nms-core"] });
    } catch (err) {
      fail((err as Error).message);
    }
    process.stdout.write(`wrote plugin "${positionals[0]}" to ${dir}\nnext: cd ${dir} && npm install && npm test\n`);
    return;
  }
  if (noun === "bundle") {
    try {
      const config = loadConfig();
      process.exitCode = await bundleCommand(config, argv.slice(1), () => commandEnvironment(config));
    } catch (err) {
      if (err instanceof BundleUsageError) fail(err.message);
      throw err;
    }
    return;
  }
  if (noun !== "accounts" && noun !== "tokens") {
    // A command a plugin provides (e.g. `nms poller ...`), with its own options.
    const provided = await pluginCommand(noun);
    if (!provided) fail(`unknown command "${noun}"\n\n${USAGE}`);
    process.exitCode = await provided.command.run(argv.slice(1), provided.env);
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      username: { type: "string" },
      password: { type: "string" },
      role: { type: "string" },
      scope: { type: "string" },
      name: { type: "string" },
      "expires-at": { type: "string" },
    },
    strict: true,
  });
  const command = `${noun} ${verb ?? ""}`.trim();
  switch (command) {
    case "accounts create": {
      if (!values.username) fail("--username is required");
      const r = role(values.role);
      const s = scope(values.scope);
      const password = values.password ?? randomPassword();
      if (password.length < 8) fail("--password must have at least 8 characters");
      const id = await withStore((auth) => auth.createAccount({ username: values.username!, password, role: r, scope: s }));
      process.stdout.write(`created account ${values.username} (${r}) id=${id}\n`);
      if (!values.password) process.stdout.write(`password: ${password}  (shown once)\n`);
      return;
    }
    case "accounts list": {
      const accounts = await withStore(async (auth) => {
        const all = [];
        let after: string | undefined;
        for (;;) {
          const page = await auth.listAccounts(1000, after);
          all.push(...page);
          if (page.length < 1000) return all;
          after = page[page.length - 1].username;
        }
      });
      for (const a of accounts) process.stdout.write(`${a.id}  ${a.username}  ${a.role}  ${JSON.stringify(a.scope)}\n`);
      return;
    }
    case "tokens create": {
      if (!values.name) fail("--name is required");
      const r = role(values.role);
      const s = scope(values.scope);
      const created = await withStore((auth) => auth.createToken({ name: values.name!, role: r, scope: s, expires_at: values["expires-at"] ?? null }));
      process.stdout.write(`created token ${values.name} (${r}) id=${created.id}\ntoken: ${created.token}  (shown once)\n`);
      return;
    }
    case "tokens list": {
      const tokens = await withStore(async (auth) => {
        const all = [];
        let before: { at: string; id: string } | undefined;
        for (;;) {
          const page = await auth.listTokens(1000, before);
          all.push(...page);
          if (page.length < 1000) return all;
          const last = page[page.length - 1];
          before = { at: last.created_at, id: last.id };
        }
      });
      for (const t of tokens) process.stdout.write(`${t.id}  ${t.name}  ${t.role}  ${JSON.stringify(t.scope)}  expires=${t.expires_at ?? "never"}\n`);
      return;
    }
    default:
      fail(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ApiError || err instanceof ConfigError) fail(err.message);
  if (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS")) fail(err.message);
  // Store problems (data dir in use, server down) are explained by their message; the stack only helps a developer.
  process.stderr.write(`nms: ${process.env.NMS_LOG_LEVEL === "debug" ? ((err as Error)?.stack ?? String(err)) : ((err as Error)?.message ?? String(err))}\n`);
  process.exit(1);
});
