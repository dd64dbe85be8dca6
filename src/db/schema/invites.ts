/** Invitations to join the hub: a link an admin hands out, spent by the first person who accepts it in time. */
import { sql } from "drizzle-orm";
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { PROJECT_ROLES, ROLES, users } from "./people";

/** A project an invite grants, with the role the new person has there. */
export interface InvitedProject {
  project_id: string;
  role: (typeof PROJECT_ROLES)[number];
}

export const invites = sqliteTable(
  "invites",
  {
    id: text("id").primaryKey(),
    /** sha256 of the link's token: the token itself is shown once, to the admin who made the invite. */
    tokenHash: text("token_hash").notNull().unique(),
    role: text("role", { enum: ROLES }).notNull(),
    projects: text("projects", { mode: "json" })
      .$type<InvitedProject[]>()
      .notNull()
      .default(sql`'[]'`),
    /** When set, only this address may accept (kept in lower case). */
    email: text("email"),
    expiresAt: text("expires_at").notNull(),
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: text("created_at").notNull(),
    /** Set, with the account it made, by the one accept that wins. */
    acceptedAt: text("accepted_at"),
    acceptedBy: text("accepted_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [index("invites_pending").on(t.acceptedAt, t.expiresAt)],
);
