/** People's personal access tokens, as the API answers them (never the token itself, but once when made). */
import { z } from "zod";
import { TOKEN_SCOPES, type personalAccessTokens } from "../db/schema";
import { id, timestamp } from "./fields";

type TokenRow = typeof personalAccessTokens.$inferSelect;

export const personalTokenSchema = z
  .object({
    id: id.meta({ description: "`DELETE /api/v1/auth/me/tokens/{id}` revokes it" }),
    name: z.string(),
    scope: z.enum(TOKEN_SCOPES).meta({ description: "`read`: acts as a viewer everywhere; `write`: as its person" }),
    project_ids: z
      .array(id)
      .nullable()
      .meta({ description: "The only projects it reaches (of those its person can see at each use); null: every project its person can see" }),
    expires_at: timestamp,
    created_at: timestamp,
    last_used_at: timestamp.nullable().meta({ description: "Its latest use, recorded to the minute; null until first used" }),
  })
  .meta({ id: "PersonalAccessToken" });

export const issuedPersonalTokenSchema = personalTokenSchema
  .extend({ token: z.string().meta({ description: "`orcpat_...`: shown this once, kept only as a digest; send it as `Authorization: Bearer`" }) })
  .meta({ id: "IssuedPersonalAccessToken" });

export const personalTokenView = (t: TokenRow): z.infer<typeof personalTokenSchema> => ({
  id: t.id,
  name: t.name,
  scope: t.scope,
  project_ids: t.projectIds ?? null,
  expires_at: t.expiresAt,
  created_at: t.createdAt,
  last_used_at: t.lastUsedAt,
});
