/** How the Worker reaches a server's link: one Durable Object per server, named by its id. */
import type { WorkerEnv } from "../worker-env";

export const linkStub = (env: WorkerEnv, serverId: string) => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId));
