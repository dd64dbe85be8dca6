/** The problem document every refusal is (RFC 9457), as the API's description states it. */
import { z } from "zod";
import { PROBLEM_CODES, type ProblemCode } from "../http/problem-codes";

const codes = Object.keys(PROBLEM_CODES) as [ProblemCode, ...ProblemCode[]];

export const problemSchema = z
  .looseObject({
    type: z.string().meta({ description: "Where the code is explained: `/docs/problems#<code>`, resolved against the hub's address" }),
    title: z.string().meta({ description: "The status's name" }),
    status: z.int(),
    detail: z.string().meta({ description: "A sentence for a person (the official CLI prints it)" }),
    code: z.enum(codes).meta({ description: "Stable and machine-readable; each is explained at /docs/problems" }),
    errors: z
      .array(z.object({ path: z.string().meta({ description: "The field, as a dotted path (`result.contracts.api.reason`)" }), message: z.string() }))
      .optional()
      .meta({ description: "Each field that broke a rule (VALIDATION_FAILED)" }),
    request_id: z.string().optional().meta({ description: "On 5xx: the id to quote when reporting it" }),
  })
  .meta({ id: "Problem", description: "An RFC 9457 problem document. Other members may be added for a code (e.g. `fields`)." });
