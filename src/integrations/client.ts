/** How the hub reaches a webhook's delivery object: one Durable Object per webhook, named by its id. */
import type { RoomEnv } from "../room-env";

export const webhookStub = (env: RoomEnv, webhookId: string) => env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(webhookId));
