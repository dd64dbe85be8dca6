/**
 * The Worker under test in the in-runtime bench: the hub as src/index.ts exports it, and the same Worker's fetch
 * once more as a named entrypoint. A socket that came in through the test runner's default entrypoint receives each
 * frame a few milliseconds later than one that came through this entrypoint, running the same fetch, or through a
 * plain forwarding Worker (bench/socket-fanout prints it in every run); through `HubWorker` the dashboards come in by
 * the hub's own code and nothing of the runner's.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import hub from "../src/index";
import type { WorkerEnv } from "../src/runtime/worker-env";

export * from "../src/index";
export default hub;

export class HubWorker extends WorkerEntrypoint<WorkerEnv> {
  override fetch(request: Request) {
    return hub.fetch(request, this.env, this.ctx as ExecutionContext);
  }
}
