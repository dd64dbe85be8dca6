/** The Worker's whole environment: what the rooms run with, and the project rooms it sends every task write to. */
import type { RoomEnv } from "./room-env";
import type { ProjectRoom } from "./room/project-room";

export interface WorkerEnv extends RoomEnv {
  PROJECT_ROOM: DurableObjectNamespace<ProjectRoom>;
}
