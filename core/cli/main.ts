#!/usr/bin/env node
import "../runtime-check.js";
import { Command, CommanderError } from "commander";
import { ConfigError, loadConfig } from "../config/Config.js";
import { ApiError } from "../errors.js";
import { commandEnvironment } from "../kernel/Kernel.js";
import type { CommandDeclaration, CommandEnvironment } from "../pluginhost/manifest.js";
import { scaffoldPlugin } from "./scaffold.js";
import { BundleUsageError, bundleCommand } from "../bundle/cli.js";
import { registerAdminCommands } from "./admin.js";
import { CliUsageError, ServiceError } from "./connection.js";
import { registerJobCommands } from "./jobs.js";
import { progressBar } from "./progress.js";

const DESCRIPTION = [
  "Administration of an nms service (npm run nms -- <command> [options]).",
  "accounts, tokens and bundle work offline on the configured store (DATABASE_URL, or the embedded PostgreSQL in NMS_DATA_DIR; the service must not be running on that data dir). accounts and tokens work through a running service's REST API instead when given its URL (--url or NMS_URL) and a token (--token or NMS_TOKEN) or an admin's login. sweep and report work only through a running service.",
].join("\n\n");

const FOOTER = `
Exit codes: 0 done, 1 failed (the service or the store said no, or could not be reached), 2 bad usage.
nms <command> --help shows a command's options.`;

/** Commands of the CLI itself; any other name is looked up among the loaded plugins' commands. */
const BUILTIN = new Set(["accounts", "tokens", "plugin", "bundle", "sweep", "report"]);

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function fail(message: string): never {
  process.stderr.write(`nms: ${message}\n`);
  process.exit(2);
}

function program(): Command {
  const nms = new Command("nms")
    .description(DESCRIPTION)
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`nms: ${text.replace(/^error: /, "")}`) })
    .showHelpAfterError("(nms --help lists the commands; nms <command> --help shows its usage)")
    .addHelpText("after", FOOTER);

  registerAdminCommands(nms);

  nms
    .command("plugin")
    .description("start a plugin package of your own (no store needed)")
    .command("new")
    .description("write a plugin package to start from")
    .argument("<id>", "the plugin's id: kebab-case, at most 40 characters")
    .option("--dir <dir>", "where to write it (default ./<id>)")
    .option("--nms-core <spec>", "the nms-core dependency spec of its package.json")
    .action((id: string, o: { dir?: string; nmsCore?: string }) => {
      let dir: string;
      try {
        dir = scaffoldPlugin({ id, dir: o.dir, nmsCore: o.nmsCore });
      } catch (err) {
        throw new CliUsageError((err as Error).message);
      }
      process.stdout.write(`wrote plugin "${id}" to ${dir}\nnext: cd ${dir} && npm install && npm test\n`);
    });

  const bundle = nms.command("bundle").description("export or import the configuration bundle, offline on the store");
  bundle
    .command("export")
    .description("write the configuration bundle (no secrets) to a file")
    .argument("<file>", 'where to write it ("-" = stdout)')
    .action((file: string) => runBundle(["export", file], "bundle export"));
  bundle
    .command("import")
    .description("import a bundle in one transaction; prints the result as JSON")
    .argument("<file>", 'the bundle ("-" = stdin)')
    .option("--dry-run", "check and count, then roll back")
    .option("--mode <mode>", "merge (default) or replace", "merge")
    .action((file: string, o: { dryRun?: boolean; mode: string }) =>
      runBundle(["import", file, "--mode", o.mode, ...(o.dryRun ? ["--dry-run"] : [])], `bundle ${o.dryRun ? "check" : "import"}`),
    );

  registerJobCommands(nms);
  return nms;
}

async function runBundle(args: string[], label: string): Promise<void> {
  const config = loadConfig();
  const bar = progressBar(label);
  try {
    process.exitCode = await bundleCommand(
      config,
      args,
      () => commandEnvironment(config),
      (done, total, table) => {
        bar.update(done, total, table);
        // The last table: the bar ends before the command's closing line ("wrote the configuration bundle ...").
        if (done === total) bar.stop();
      },
    );
  } catch (err) {
    if (err instanceof BundleUsageError) throw new CliUsageError(err.message);
    throw err;
  } finally {
    bar.stop();
  }
}

/**
 * The loaded plugins' commands (e.g. `api`, `poller`, `flows`), each a subcommand that hands the arguments after its
 * name, untouched, to its own `run` (which parses them and answers its own --help).
 */
function addPluginCommands(nms: Command, argv: string[], commands: Map<string, CommandDeclaration>, env: CommandEnvironment): void {
  for (const [name, command] of commands) {
    nms
      .command(name)
      .description(command.description)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .argument("[arguments...]", `see nms ${name} --help`)
      .action(async () => {
        process.exitCode = await command.run(argv.slice(argv.indexOf(name) + 1), env);
      });
  }
}

async function pluginCommands(): Promise<{ commands: Map<string, CommandDeclaration>; env: CommandEnvironment }> {
  const { plugins, env } = await commandEnvironment(loadConfig());
  const commands = new Map<string, CommandDeclaration>();
  for (const p of plugins) {
    for (const [name, command] of Object.entries(p.manifest.commands ?? {})) if (!BUILTIN.has(name) && !commands.has(name)) commands.set(name, command);
  }
  return { commands, env };
}

async function main(argv: string[]): Promise<void> {
  const nms = program();
  const first = argv[0];
  // Plugins are loaded only when the command may be theirs, or for the help that lists them.
  if (first === undefined || !BUILTIN.has(first)) {
    const help = first === undefined || first === "help" || first === "--help" || first === "-h";
    try {
      const { commands, env } = await pluginCommands();
      // `nms help api` is `nms api --help`: the plugin's own usage, not commander's stub for a pass-through command.
      const asked = first === "help" && argv[1] !== undefined ? commands.get(argv[1]) : undefined;
      if (asked) {
        process.exitCode = await asked.run(["--help"], env);
        return;
      }
      addPluginCommands(nms, argv, commands, env);
    } catch (err) {
      if (!help) throw err;
      nms.addHelpText("after", `\n(The plugins' commands are not listed: ${(err as Error).message})`);
    }
  }
  if (first === undefined) {
    nms.outputHelp();
    return;
  }
  try {
    await nms.parseAsync(argv, { from: "user" });
  } catch (err) {
    // Commander has printed its message (or the help): --help and help exit 0, a usage mistake 2.
    if (err instanceof CommanderError) throw new Exit(err.exitCode === 0 ? 0 : 2);
    throw err;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof Exit) process.exit(err.code);
  if (err instanceof CliUsageError || err instanceof ApiError || err instanceof ConfigError) fail(err.message);
  // A 4xx of the service is the caller's mistake, as ApiError is offline; 401/403 and 5xx are failures.
  if (err instanceof ServiceError) {
    process.stderr.write(`nms: ${err.message}\n`);
    process.exit(err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 403 ? 2 : 1);
  }
  if (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS")) fail(err.message);
  // Store problems (data dir in use, server down) are explained by their message; the stack only helps a developer.
  process.stderr.write(`nms: ${process.env.NMS_LOG_LEVEL === "debug" ? ((err as Error)?.stack ?? String(err)) : ((err as Error)?.message ?? String(err))}\n`);
  process.exit(1);
});
