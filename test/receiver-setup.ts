/**
 * The outside world of the hub's integrations, faked at the network edge and
 * run in Node beside the tests: webhook receivers that verify every delivery
 * with the `standardwebhooks` library (as a customer's would), and a
 * DNS-over-HTTPS resolver whose names tests may point elsewhere
 * (`POST /dns-names/{name}` with the addresses; `GET /dns-queries/{name}` counts the queries for one). Tests steer them over HTTP (`/control/...`);
 * `GET /control/{name}/wait?count=N` answers once N deliveries have arrived
 * (or after `timeoutMs`, 30 s by default), so a caller can time a delivery
 * on its own clock.
 */
import { createServer, type IncomingMessage } from "node:http";
import { Webhook } from "standardwebhooks";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    receiver: string;
  }
}

interface Endpoint {
  secrets: string[];
  /** Status to answer with; 2xx accepts. */
  status: number;
  /** Milliseconds to wait before answering. */
  delayMs: number;
  received: { id: string; timestamp: string; traceparent: string | null; verified: boolean; body: unknown; at: number }[];
}

/** A long-poll waiting for an endpoint's deliveries to reach `count`. */
interface Waiter {
  name: string;
  count: number;
  answer: () => void;
}
const waiters = new Set<Waiter>();

const endpoints = new Map<string, Endpoint>();
const endpoint = (name: string) => {
  let e = endpoints.get(name);
  if (!e) endpoints.set(name, (e = { secrets: [], status: 200, delayMs: 0, received: [] }));
  return e;
};

/** How many queries the DNS fake answered for each name (`GET /dns-queries/{name}`). */
const dnsQueries = new Map<string, number>();
/** Names the DNS fake answers for, and their addresses. */
const dns = new Map<string, string[]>([
  ["public.example", ["93.184.216.34"]],
  ["sneaky.example", ["93.184.216.34", "10.0.0.7"]],
  ["loopback.example", ["127.0.0.1"]],
]);

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => resolve(body));
  });

export default async function setup(project: TestProject) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, "http://receiver");
    const body = await read(req);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (url.pathname.startsWith("/dns-names/") && req.method === "POST") {
      // A name's addresses, changed under a webhook already saved (what a DNS rebinding does).
      dns.set(url.pathname.slice("/dns-names/".length), JSON.parse(body));
      return json(200, {});
    }
    if (url.pathname.startsWith("/dns-queries/")) return json(200, { count: dnsQueries.get(url.pathname.slice("/dns-queries/".length)) ?? 0 });
    if (url.pathname === "/dns-query") {
      const queried = url.searchParams.get("name") ?? "";
      dnsQueries.set(queried, (dnsQueries.get(queried) ?? 0) + 1);
      const type = url.searchParams.get("type") === "AAAA" ? 28 : 1;
      const answers = (dns.get(url.searchParams.get("name") ?? "") ?? []).filter((a) => (type === 28) === a.includes(":"));
      return json(200, { Status: 0, Answer: answers.map((data) => ({ name: url.searchParams.get("name"), type, TTL: 60, data })) });
    }
    const [, kind, name, action] = url.pathname.split("/");
    if (kind === "control" && name && action === "wait") {
      // Answers with how many have arrived and the last of them, without the whole list.
      const e = endpoint(name);
      const count = Number(url.searchParams.get("count") ?? 1);
      const reply = () => json(200, { count: e.received.length, last: e.received.at(-1) ?? null });
      if (e.received.length >= count) return reply();
      const waiter: Waiter = { name, count, answer: () => (clearTimeout(timer), waiters.delete(waiter), reply()) };
      const timer = setTimeout(waiter.answer, Number(url.searchParams.get("timeoutMs") ?? 30_000));
      waiters.add(waiter);
      return;
    }
    if (kind === "control" && name) {
      const e = endpoint(name);
      if (req.method === "POST") Object.assign(e, JSON.parse(body));
      return json(200, e);
    }
    if (kind === "hooks" && name) {
      const e = endpoint(name);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const verified = e.secrets.length > 0 && e.secrets.some((s) => {
        try {
          new Webhook(s).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (e.delayMs) await new Promise((r) => setTimeout(r, e.delayMs));
      e.received.push({ id: headers["webhook-id"] ?? "", timestamp: headers["webhook-timestamp"] ?? "", traceparent: headers.traceparent ?? null, verified, body: JSON.parse(body || "null"), at: Date.now() });
      for (const w of waiters) if (w.name === name && e.received.length >= w.count) w.answer();
      res.writeHead(e.status);
      return res.end(e.status >= 300 ? "not now" : "ok");
    }
    json(404, { error: "no such path" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("receiver", `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
