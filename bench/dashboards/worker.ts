/**
 * The bench's dashboards, in a Worker of their own: 1,000 sockets that receive events as a dashboard does (parse each
 * frame, note when it came), apart from whatever sends to them. The room reaches them through the hub's Worker, as
 * a browser's socket does (by the hub's named entrypoint, or by the test runner's default one); the bare Durable
 * Object of bench/baseline either through the baseline Worker, which hands the upgrade on, or directly, as only a
 * Worker bound to it can.
 */
import { DurableObject } from "cloudflare:workers";
import type { Broadcaster } from "../baseline/worker";

interface DashboardsEnv {
  HUB: Fetcher;
  RUNNER_DEFAULT: Fetcher;
  BASELINE: Fetcher;
  BROADCASTER: DurableObjectNamespace<Broadcaster>;
}

/**
 * Where a set of sockets connects: the hub's event socket of a project, with a person's token, through the hub's
 * named entrypoint or the runner's default one; or a bare object by name.
 */
export type Target = { hub: { projectId: string; token: string; through: "entrypoint" | "runner-default" } } | { bare: string; through: "worker" | "binding" };

/** One set of sockets; each frame's arrival time (Date.now(), the clock every isolate of this runtime shares) by content. */
export class Dashboards extends DurableObject<DashboardsEnv> {
  private sockets: WebSocket[] = [];
  private arrivals = new Map<string, number[]>();
  private first: string | null = null;

  /** Opens `count` sockets on `target`, one after another, as dashboards would come. */
  async open(target: Target, count: number): Promise<number> {
    for (let i = 0; i < count; i++) {
      const response =
        "hub" in target
          ? await (target.hub.through === "entrypoint" ? this.env.HUB : this.env.RUNNER_DEFAULT).fetch(
              `https://hub.test/api/v1/projects/${target.hub.projectId}/ws`,
              { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${target.hub.token}` } },
            )
          : target.through === "worker"
            ? await this.env.BASELINE.fetch(`https://baseline.test/broadcaster/${target.bare}`, { headers: { Upgrade: "websocket" } })
            : await this.env.BROADCASTER.getByName(target.bare).fetch("https://broadcaster.test/", { headers: { Upgrade: "websocket" } });
      const ws = response.webSocket;
      if (response.status !== 101 || !ws) throw new Error(`no upgrade: ${response.status}`);
      ws.accept();
      ws.addEventListener("message", (e) => {
        const f = JSON.parse(e.data as string);
        if (f.event_type !== "note_added") return;
        const at = Date.now();
        this.first ??= e.data as string;
        const list = this.arrivals.get(f.data.content);
        if (list) list.push(at);
        else this.arrivals.set(f.data.content, [at]);
      });
      this.sockets.push(ws);
    }
    return this.sockets.length;
  }

  /** When each socket received the frame carrying `content`, once every one has (or `within` ms have passed). */
  async received(content: string, within = 2000): Promise<number[]> {
    const until = Date.now() + within;
    while ((this.arrivals.get(content)?.length ?? 0) < this.sockets.length && Date.now() < until) await new Promise((r) => setTimeout(r, 1));
    const list = this.arrivals.get(content) ?? [];
    this.arrivals.delete(content);
    return list;
  }

  /** The first event frame any socket received, whole: what the room sends, for the bare object to send the same. */
  sample(): string | null {
    return this.first;
  }

  close(): void {
    for (const ws of this.sockets) ws.close(1000, "done");
    this.sockets = [];
  }
}

export default {
  fetch: () => new Response(null, { status: 404 }),
} satisfies ExportedHandler<DashboardsEnv>;
