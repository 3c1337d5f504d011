import { Description, Property, Required } from "@tsed/schema";

@Description("The error of an error envelope.")
export class ErrorBody {
  @Required()
  @Description("Stable machine code; clients branch on it")
  code: string;

  @Required()
  @Description("Operator-facing sentence; never carries internal error text")
  message: string;
}

@Description("The body of every failure answer: an error with a stable code and an operator-facing message.")
export class ErrorEnvelope {
  @Required()
  @Property(ErrorBody)
  error: ErrorBody;
}

@Description("The id of a created resource: the body of every 201 from a creator.")
export class CreatedId {
  @Required()
  @Description("Identity of the created resource")
  id: string;
}

@Description("Answer of a write that returns no resource (the spec's mutation ok).")
export class MutationOk {
  @Description("Always true: failures answer the error envelope")
  @Required()
  ok: boolean;
}
