import { useDecorators } from "@tsed/core";
import { BodyParams } from "@tsed/platform-params";
import { Required } from "@tsed/schema";

/** The whole JSON body, required: a missing or non-JSON body is a 400, never an undefined argument. */
export function Body(): ParameterDecorator {
  return useDecorators(BodyParams(), Required()) as ParameterDecorator;
}
