/** How the hub reaches an integration's delivery lane: one Durable Object per webhook or linked chat, named by its id. */
import type { RoomEnv } from "../room-env";
import type { OutboxTarget } from "../room/outbox";

export const webhookStub = (env: RoomEnv, webhookId: string) => env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(webhookId));

export const laneStub = (env: RoomEnv, target: OutboxTarget) =>
  target.kind === "webhook" ? webhookStub(env, target.id) : env.TELEGRAM_CHAT.get(env.TELEGRAM_CHAT.idFromName(target.id));
