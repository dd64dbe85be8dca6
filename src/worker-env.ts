/** The Worker's whole environment: `Env`, the project rooms it sends every task write to, and the servers' links. */
import type { Env } from "./env";
import type { ProjectRoom } from "./room/project-room";
import type { ServerLink } from "./server-link/server-link";

export interface WorkerEnv extends Env {
  PROJECT_ROOM: DurableObjectNamespace<ProjectRoom>;
  SERVER_LINK: DurableObjectNamespace<ServerLink>;
}
