/** Worker entry: the HTTP app, the housekeeping cron, and the Durable Object classes. */
import { buildApp } from "./app";
import { answerKnownEmptyPoll, polledList } from "./files/file-polls";
import {
  expirePermissionLog,
  sweepExpired,
  wakeRoomsWithLapsedLeases,
  wakeRoomsWithOverdueSchedules,
  wakeRoomsWithStrandedReviews,
  wakeStrandedDeliveries,
  wakeRoomsToArchive,
} from "./cron/maintenance";
import type { WorkerEnv } from "./runtime/worker-env";

export { ProjectRoom } from "./room/project-room";
export { ServerLink } from "./server-link/server-link";
export { WebhookEndpoint } from "./integrations/webhook-endpoint";
export { TelegramChat } from "./integrations/telegram/chat";
export { SlackChannel } from "./integrations/slack/channel";
export { TelemetryExporter } from "./integrations/telemetry/exporter";
export { CodeReviewer } from "./integrations/code-review/reviewer";
export { PermissionLogWriter } from "./permission-log/writer";
export { McpSession } from "./mcp/session";

const app = buildApp();

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext) {
    const list = polledList(request);
    return (list && (await answerKnownEmptyPoll(request, list))) || app.fetch(request, env, ctx);
  },
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepExpired(env));
    ctx.waitUntil(wakeStrandedDeliveries(env));
    ctx.waitUntil(wakeRoomsWithLapsedLeases(env));
    ctx.waitUntil(wakeRoomsWithOverdueSchedules(env));
    ctx.waitUntil(wakeRoomsWithStrandedReviews(env));
    ctx.waitUntil(expirePermissionLog(env));
    ctx.waitUntil(wakeRoomsToArchive(env));
  },
} satisfies ExportedHandler<WorkerEnv>;
