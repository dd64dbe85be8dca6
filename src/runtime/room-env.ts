/** What the project rooms run with: `Env`, the servers' links they hand the daemon's pushes to, and the integrations' lanes they wake. */
import type { Env } from "./env";
import type { SlackChannel } from "../integrations/slack/channel";
import type { TelegramChat } from "../integrations/telegram/chat";
import type { TelemetryExporter } from "../integrations/telemetry/exporter";
import type { WebhookEndpoint } from "../integrations/webhook-endpoint";
import type { ServerLink } from "../server-link/server-link";

export interface RoomEnv extends Env {
  SERVER_LINK: DurableObjectNamespace<ServerLink>;
  WEBHOOK_ENDPOINT: DurableObjectNamespace<WebhookEndpoint>;
  TELEGRAM_CHAT: DurableObjectNamespace<TelegramChat>;
  SLACK_CHANNEL: DurableObjectNamespace<SlackChannel>;
  TELEMETRY_EXPORT: DurableObjectNamespace<TelemetryExporter>;
  /** The projects' model reviewers (integrations/code-review/reviewer.ts), reached through wake.ts: their module reaches the links. */
  CODE_REVIEWER: DurableObjectNamespace;
}
