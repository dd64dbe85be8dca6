/**
 * Schemas of seeds/orchestratia-protocols-v1.md. Objects are loose: fields
 * the seed does not name are kept, since every protocol feature is opt-in and
 * newer agents may send more.
 */
import { z } from "zod";

const name = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");
const names = z.array(name).max(200, "must have at most 200 entries");

/** §5 Agent Capabilities Schema. */
export const capabilitiesSchema = z.looseObject({
  $schema: z.string().max(200).optional(),
  repos: z
    .record(
      z.string().max(200),
      z.looseObject({ path: z.string().max(1000).optional(), languages: names.optional(), tools: names.optional() }),
    )
    .optional(),
  languages: names.optional(),
  tools: names.optional(),
  environments: names.optional(),
  tags: names.optional(),
  max_concurrent_tasks: z.int("must be an integer").min(1, "must be at least 1").max(1000).optional(),
});
export type Capabilities = z.infer<typeof capabilitiesSchema>;
