import { Inject, Injectable } from "@tsed/di";
import { conflict, notFound } from "../../../core/index.js";
import { BUILTIN_TRAP_NAMES, nameOf } from "../lib/trapNames.js";
import type { TrapNameBody, TrapNameView } from "../models/TrapNameModels.js";
import { TrapNameRepository, type TrapNameWrite } from "../repositories/TrapNameRepository.js";

const write = (b: TrapNameBody): TrapNameWrite => ({
  oid: b.oid,
  name: b.name.trim(),
  kind: b.kind === "object" ? "object" : "notification",
  description: b.description ?? null,
});

/** The built-in OID names and the users' own (which take precedence); names a trap's OID and its varbinds. */
@Injectable()
export class TrapNameService {
  @Inject(TrapNameRepository)
  private repo: TrapNameRepository;

  /** Built-in rows first (in table order), then the users' rows by OID. */
  async list(): Promise<TrapNameView[]> {
    const users = await this.repo.all();
    return [
      ...BUILTIN_TRAP_NAMES.map((b) => ({ id: null, oid: b.oid, name: b.name, kind: b.kind, description: b.description, builtin: true })),
      ...users.map((u) => ({ ...u, builtin: false })),
    ];
  }

  /** A resolver over the current names: the name of a trap OID (exact) or of a varbind OID (exact, else by object prefix). */
  async resolver(): Promise<(oid: string) => string | null> {
    const exact = new Map<string, string>();
    const objects = new Map<string, string>();
    const rows = [...BUILTIN_TRAP_NAMES, ...(await this.repo.all())];
    for (const r of rows) {
      exact.set(r.oid, r.name);
      if (r.kind === "object") objects.set(r.oid, r.name);
      else objects.delete(r.oid);
    }
    return (oid) => nameOf(oid, exact, objects);
  }

  async create(body: TrapNameBody): Promise<string> {
    const id = await this.repo.insert(write(body));
    if (id === null) throw conflict("duplicate_oid", "That OID has a name already: replace it with PUT /events/trap-names/{id}.");
    return id;
  }

  async replace(id: string, body: TrapNameBody): Promise<TrapNameView> {
    const w = write(body);
    const done = await this.repo.update(id, w);
    if (done === "duplicate") throw conflict("duplicate_oid", "Another row names that OID.");
    if (!done) throw notFound("No such trap name (built-in rows have no id and cannot be changed).");
    return { id, ...w, builtin: false };
  }

  async remove(id: string): Promise<void> {
    if (!(await this.repo.remove(id))) throw notFound("No such trap name (built-in rows have no id and cannot be deleted).");
  }
}
