/** Code health snapshots the daemons' scanner makes. */
import { index, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { datarefs } from "./files";
import { projects } from "./people";

/**
 * A project's code health (API.md "Session files and code health"): one row per snapshot a daemon's scanner
 * (orchestratia_agent/codebase_scanner) produced, newest kept beside the older ones as its history. The row holds what
 * `orchestratia code health|debt|priorities` print and the dashboard draws; the whole snapshot is a DataRef of the
 * project in R2. Written only by the project's room, with its `code_health_scanned` event.
 */
export const codeHealthSnapshots = sqliteTable(
  "code_health_snapshots",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    serverId: text("server_id").notNull(),
    sessionId: text("session_id"),
    /** The whole snapshot, as JSON. */
    datarefId: text("dataref_id")
      .notNull()
      .references(() => datarefs.id, { onDelete: "cascade" }),
    healthScore: integer("health_score").notNull(),
    healthGrade: text("health_grade").notNull(),
    techDebtHours: real("tech_debt_hours").notNull(),
    /** JSON text: the summary as the CLI reads it (src/domain/code-health.ts), without the fields above. */
    summary: text("summary").notNull(),
    /** The scanner's clock, as it said it. */
    scannedAt: text("scanned_at").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [index("code_health_project").on(t.projectId, t.receivedAt)],
);
export type CodeHealthRow = typeof codeHealthSnapshots.$inferSelect;
