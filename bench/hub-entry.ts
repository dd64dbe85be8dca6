/**
 * The Worker under test in the in-runtime bench: the hub as src/index.ts exports it, and the same Worker's fetch
 * once more as a named entrypoint. Reached through the test runner's default entrypoint, a socket's every frame
 * costs a few milliseconds more than through any other Worker, the hub's code included (bench/socket-fanout shows
 * both); through `HubWorker` the dashboards come in by the hub's own code and nothing of the runner's.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import hub from "../src/index";
import type { WorkerEnv } from "../src/worker-env";

export * from "../src/index";
export default hub;

export class HubWorker extends WorkerEntrypoint<WorkerEnv> {
  override fetch(request: Request) {
    return hub.fetch(request, this.env, this.ctx as ExecutionContext);
  }
}
