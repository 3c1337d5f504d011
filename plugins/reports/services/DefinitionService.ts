/** Report definitions: a name, a description and a spec of sections, checked against the kinds this build renders. */
import { Inject, Injectable } from "@tsed/di";
import { badRequest, decodeCursor, isUuid, notFound, page } from "../../../core/index.js";
import type { DefinitionBody, DefinitionView } from "../models/ReportModels.js";
import { ReportRepository, type DefinitionRow } from "../repositories/ReportRepository.js";
import { SectionRegistry } from "./SectionRegistry.js";

const noDefinition = () => notFound("No such report definition.");

@Injectable()
export class DefinitionService {
  @Inject(ReportRepository)
  private repo: ReportRepository;

  @Inject(SectionRegistry)
  private sections: SectionRegistry;

  /** The body, checked: non-blank name, spec under the document cap and renderable. */
  private checked(body: DefinitionBody): { name: string; description: string | null; spec: Record<string, unknown> } {
    const name = body.name.trim();
    if (!name) throw badRequest("validation_failed", "name must not be blank.");
    this.sections.checkSize(body.spec);
    this.sections.check(body.spec);
    return { name, description: body.description?.trim() || null, spec: body.spec };
  }

  async create(body: DefinitionBody): Promise<string> {
    return this.repo.insertDefinition(this.checked(body));
  }

  async list(limit: number, cursor?: string): Promise<{ rows: DefinitionView[]; next: string | null }> {
    const after = cursor ? (decodeCursor(cursor, 2, (p) => isUuid(p[1]) && !Number.isNaN(Date.parse(p[0]))) as [string, string]) : null;
    return page(await this.repo.definitions(limit, after), limit, (r) => [r.created_at, r.id]);
  }

  async get(id: string): Promise<DefinitionRow> {
    const row = await this.repo.definition(id);
    if (!row) throw noDefinition();
    return row;
  }

  async replace(id: string, body: DefinitionBody): Promise<void> {
    const d = this.checked(body);
    if (!(await this.repo.updateDefinition(id, d))) throw noDefinition();
  }

  async remove(id: string): Promise<void> {
    if (!(await this.repo.deleteDefinition(id))) throw noDefinition();
  }
}
