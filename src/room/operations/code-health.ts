/** A code health snapshot joins the project's history with its event, which says who scanned and how it scored (never the snapshot itself). */
import { codeHealthSnapshots, datarefs } from "../../db/schema";
import { statement } from "../statements";
import { recordEvents, type Planner } from "./kernel";
import { notAllowed } from "./refusals";

export const storeCodeHealth: Planner<"code_health_snapshot"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "agent") return notAllowed("Only a server's daemon sends code health snapshots");
  const s = { ...cmd.snapshot, projectId: ctx.projectId, receivedAt: ctx.now };
  return {
    taskId: "",
    statements: [
      statement(ctx.d1, ctx.db.insert(datarefs).values({ ...cmd.dataref, projectId: ctx.projectId })),
      statement(ctx.d1, ctx.db.insert(codeHealthSnapshots).values(s)),
    ],
    events: recordEvents(ctx, [
      {
        type: "code_health_scanned",
        taskId: null,
        data: {
          snapshot_id: s.id,
          session_id: s.sessionId,
          health_score: s.healthScore,
          health_grade: s.healthGrade,
          tech_debt_total_hours: s.techDebtHours,
          scanned_at: s.scannedAt,
        },
      },
    ]),
    data: { snapshot: s },
  };
};
