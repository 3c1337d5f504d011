import { Description, Property, Required } from "@tsed/schema";

export class ErrorBody {
  @Required()
  @Description("Stable machine code; clients branch on it")
  code: string;

  @Required()
  @Description("Operator-facing sentence; never carries internal error text")
  message: string;
}

export class ErrorEnvelope {
  @Required()
  @Property(ErrorBody)
  error: ErrorBody;
}

export class CreatedId {
  @Required()
  @Description("Identity of the created resource")
  id: string;
}

export class MutationOk {
  @Required()
  ok: boolean;
}
