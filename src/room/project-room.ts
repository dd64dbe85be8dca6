/**
 * One Durable Object per project: the single writer of that project's tasks.
 * Its operations (task transitions, completion cascades) arrive over RPC and
 * run one at a time.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class ProjectRoom extends DurableObject<Env> {}
