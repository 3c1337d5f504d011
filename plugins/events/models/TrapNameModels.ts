import { AdditionalProperties, Description, Enum, MaxLength, MinLength, Nullable, Optional, Pattern, Required } from "@tsed/schema";

/** A dotted OID: at least two arcs, digits only. */
export const OID_PATTERN = "^[0-2](\\.(0|[1-9][0-9]{0,9})){1,127}$";

@AdditionalProperties(false)
@Description("Body of POST /events/trap-names and of the full-document PUT /events/trap-names/{id}: a name for a trap or varbind OID.")
export class TrapNameBody {
  @Required() @MaxLength(300) @Pattern(OID_PATTERN) @Description("Dotted OID, for example 1.3.6.1.4.1.9999.0.1") oid: string;
  @Required() @MinLength(1) @MaxLength(200) @Description('Shown name, for example "ACME-MIB::fanFailure"') name: string;
  @Optional()
  @Enum("notification", "object")
  @Description("notification (default): a trap's OID, matched exactly; object: a varbind's object, matched as a prefix (its instance shown after the name)")
  kind?: string;
  @Optional() @Nullable(String) @MaxLength(1000) @Description("What it means; null = none") description?: string | null;
}

@Description("A trap or varbind OID's name (GET /events/trap-names): built-in rows (read-only, id null) and rows users added.")
export class TrapNameView {
  @Description("The user row's id; null for a built-in row") @Required() @Nullable(String) id: string | null;
  @Description("Dotted OID") @Required() oid: string;
  @Description("Shown name (MODULE::name for the built-in rows)") @Required() name: string;
  @Description("notification: a trap's OID; object: a varbind object (matched as a prefix)") @Required() @Enum("notification", "object") kind: string;
  @Description("What it means; null = none") @Required() @Nullable(String) description: string | null;
  @Description("A built-in row: read-only (a user row with the same OID takes precedence)") @Required() builtin: boolean;
}
