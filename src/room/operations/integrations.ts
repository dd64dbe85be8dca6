/** What the project's integrations put on its record: an endpoint the hub gave up on. */
import { and, eq } from "drizzle-orm";
import { webhooks } from "../../db/schema";
import type { ProblemData } from "../commands";
import { statement } from "../statements";
import { answerOnly, recordEvents, type Cmd, type OpContext, type OpOutcome } from "./kernel";

const webhookNotFound: ProblemData = { status: 404, code: "NOT_FOUND", detail: "Webhook not found" };

/** Disables a webhook that failed for too long, and says so in the project's events (not its URL, which may hold a token). */
export const disableWebhook = async (ctx: OpContext, cmd: Cmd<"disable_webhook">): Promise<OpOutcome> => {
  const hook = await ctx.db.query.webhooks.findFirst({ where: and(eq(webhooks.id, cmd.webhookId), eq(webhooks.projectId, ctx.projectId)) });
  if (!hook) return webhookNotFound;
  if (!hook.enabled) return { ...answerOnly("", {}), unchanged: true };
  const update = statement(
    ctx.d1,
    ctx.db
      .update(webhooks)
      .set({ enabled: false, disabledReason: cmd.reason, updatedAt: ctx.now })
      .where(and(eq(webhooks.id, hook.id), eq(webhooks.enabled, true)))
      .returning({ id: webhooks.id }),
  );
  return {
    taskId: "",
    guardedUpdate: 0,
    statements: [update],
    events: recordEvents(ctx, [{ type: "webhook_disabled", taskId: null, data: { webhook_id: hook.id, reason: cmd.reason } }], { webhookId: hook.id, updatedAt: ctx.now }),
  };
};
