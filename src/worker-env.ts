/** The Worker's whole environment: `Env` and the namespace of the project rooms it sends every task write to. */
import type { Env } from "./env";
import type { ProjectRoom } from "./room/project-room";

export interface WorkerEnv extends Env {
  PROJECT_ROOM: DurableObjectNamespace<ProjectRoom>;
}
