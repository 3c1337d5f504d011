import { Agenda } from "agenda";
import { PostgresBackend, PostgresJobRepository } from "@agendajs/postgres-backend";
import type pg from "pg";
import type { Logger } from "../logging/Logger.js";
import type { PluginJobs } from "../pluginhost/manifest.js";
import { isStoreUnreachable } from "../store/pgErrors.js";

export interface JobDefinition {
  fullName: string;
  every?: string;
  concurrency?: number;
  lockLifetimeMs?: number;
  run: (data: unknown) => Promise<void>;
}

const TABLE = "nms_agenda_jobs";

/**
 * Agenda 6 on PostgreSQL (table public.nms_agenda_jobs; the backend quotes the name, so it cannot live in schema core). Jobs are defined before start;
 * recurring ones are upserted by name, so each runs once per interval however
 * many replicas there are. Shutdown drains running jobs instead of abandoning
 * their locks.
 */
export class JobScheduler {
  private agenda?: Agenda;
  private readonly definitions = new Map<string, JobDefinition>();
  private started = false;
  private unreachableWarnedAt = 0;
  /** Told of every run's outcome and duration (the kernel's job metrics). */
  observe?: (job: string, outcome: "success" | "failure", seconds: number) => void;

  constructor(
    private readonly pool: pg.Pool | null,
    private readonly instanceName: string,
    private readonly processEvery: string,
    private readonly log: Logger,
    /** Agenda keeps an un-cancellable timer of half this per job run; tests use a short one so the process can exit. */
    private readonly defaultLockLifetimeMs = 10 * 60 * 1000,
  ) {}

  get enabled(): boolean {
    return this.pool !== null;
  }

  define(def: JobDefinition): void {
    if (this.definitions.has(def.fullName)) throw new Error(`job ${def.fullName} defined twice`);
    this.definitions.set(def.fullName, def);
  }

  async start(): Promise<void> {
    if (!this.pool) {
      if (this.definitions.size) this.log.warn("skeleton mode: background jobs do not run", { jobs: [...this.definitions.keys()] });
      return;
    }
    await this.ensureSchema(this.pool);
    const backend = new PostgresBackend({ pool: this.pool, tableName: TABLE, channelName: TABLE, ensureSchema: false });
    // Its LISTEN client goes back to the shared pool on drain with this listener still attached; when the
    // server then closes connections (shutdown, restart) the channel re-emits the error, which must not crash us.
    (backend.notificationChannel as unknown as NodeJS.EventEmitter | undefined)?.on?.("error", (err: Error) =>
      this.log.debug("job notification channel error", { error: err.message }),
    );
    this.agenda = new Agenda({ name: this.instanceName, backend, processEvery: this.processEvery });
    this.agenda.on("error", (err: Error) => this.schedulerError(err));
    for (const def of this.definitions.values()) {
      this.agenda.define(
        def.fullName,
        async (job) => {
          const started = process.hrtime.bigint();
          const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
          try {
            await def.run(job.attrs.data);
            this.observe?.(def.fullName, "success", seconds());
          } catch (err) {
            this.observe?.(def.fullName, "failure", seconds());
            this.log.error("job failed", { job: def.fullName, error: err });
            throw err;
          }
        },
        { concurrency: def.concurrency ?? 1, lockLifetime: def.lockLifetimeMs ?? this.defaultLockLifetimeMs },
      );
    }
    await this.agenda.start();
    for (const def of this.definitions.values()) {
      if (def.every) await this.agenda.every(def.every, def.fullName);
    }
    this.started = true;
    this.log.info("scheduler started", { jobs: this.definitions.size });
  }

  /**
   * The backend's own schema set-up (CREATE ... IF NOT EXISTS) is not safe when
   * replicas boot together on a new database, so it runs once at a time under
   * the migrations' advisory lock, and Agenda itself never creates anything.
   */
  private async ensureSchema(pool: pg.Pool): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtext('nms.migrations'))");
      await new PostgresJobRepository({ pool, tableName: TABLE, ensureSchema: true }).connect();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext('nms.migrations'))").catch(() => undefined);
      client.release();
    }
  }

  /**
   * Agenda polls every few hundred milliseconds, and while the database is unreachable each poll fails: that is
   * logged at warn level at most once a minute, not as dozens of error lines a second. Other errors are errors.
   */
  private schedulerError(err: Error): void {
    if (!isStoreUnreachable(err)) return void this.log.error("scheduler error", { error: err });
    const now = Date.now();
    if (now - this.unreachableWarnedAt < 60_000) return;
    this.unreachableWarnedAt = now;
    this.log.warn("scheduler: the database is unreachable; jobs wait until it is back", { error: err.message });
  }

  forPlugin(pluginId: string): PluginJobs {
    const full = (name: string) => {
      const fullName = `${pluginId}.${name}`;
      if (!this.definitions.has(fullName)) throw new Error(`plugin ${pluginId} declared no job "${name}"`);
      return fullName;
    };
    const agenda = () => {
      if (!this.agenda) throw new Error("the scheduler is not running (skeleton mode or not started)");
      return this.agenda;
    };
    return {
      now: async (name, data) => {
        await agenda().now(full(name), data as never);
      },
      schedule: async (when, name, data) => {
        await agenda().schedule(when, full(name), data as never);
      },
      cancel: async (name) => agenda().cancel({ name: full(name) }),
    };
  }

  /** Waits for running jobs (up to `ms`), then releases the rest; never closes the shared pool. */
  async drain(ms: number): Promise<void> {
    if (!this.agenda || !this.started) return;
    const result = await this.agenda.drain({ timeout: ms, closeConnection: false });
    if (result.timedOut) this.log.warn("jobs still running at shutdown", { running: result.running });
    this.started = false;
  }
}
