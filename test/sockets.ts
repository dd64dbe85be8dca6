/** WebSocket clients for tests: open through the Worker, and wait for frames with a timeout. */
import { conformingFetch } from "./api-conformance";
import { expect } from "vitest";
import { BASE } from "./helpers";

export interface TestSocket {
  ws: WebSocket;
  frames: any[];
  protocol: string | null;
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves with the first frame (from `from` on) that matches. */
  next(match?: (frame: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Waits until `n` frames matching have arrived (counted from the start) and returns them. */
  collect(n: number, match?: (frame: any) => boolean, timeoutMs?: number): Promise<any[]>;
  send(frame: unknown): void;
}

/** `keep`: which frames `frames` keeps (all by default); a socket carrying megabytes of file chunks keeps none of them. */
export async function openSocket(path: string, headers: Record<string, string> = {}, keep: (frame: any) => boolean = () => true): Promise<TestSocket> {
  const res = await conformingFetch(new Request(BASE + path, { headers: { Upgrade: "websocket", ...headers } }));
  expect(res.status, await (res.webSocket ? Promise.resolve("") : res.clone().text())).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const frames: any[] = [];
  const waiters: (() => void)[] = [];
  ws.addEventListener("message", (e) => {
    const data = typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer);
    const frame = JSON.parse(data);
    if (keep(frame)) frames.push(frame);
    waiters.splice(0).forEach((w) => w());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
  let cursor = 0;
  const wait = (done: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(frames.slice(-5))}`)), timeoutMs);
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  return {
    ws,
    frames,
    protocol: res.headers.get("Sec-WebSocket-Protocol"),
    closed,
    async next(match = () => true, timeoutMs = 3000) {
      let found: any;
      await wait(
        () => {
          while (cursor < frames.length) {
            const f = frames[cursor++];
            if (match(f)) {
              found = f;
              return true;
            }
          }
          return false;
        },
        timeoutMs,
        "a frame",
      );
      return found;
    },
    async collect(n, match = () => true, timeoutMs = 5000) {
      await wait(() => frames.filter(match).length >= n, timeoutMs, `${n} frames`);
      return frames.filter(match).slice(0, n);
    },
    send(frame) {
      ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
    },
  };
}

export const dashboard = (projectId: string, token: string) => openSocket(`/api/v1/projects/${projectId}/ws`, { "Sec-WebSocket-Protocol": `bearer, ${token}` });
export const isEvent = (f: any) => f.type === "event";
