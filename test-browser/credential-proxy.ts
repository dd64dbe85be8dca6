/**
 * A loopback proxy in front of the hub that adds a caller's credentials to every request: for clients that cannot send
 * any (the MCP conformance CLI). An Origin or Host naming the proxy itself becomes the hub's, as if the client had
 * called the hub; any other is forwarded untouched, so the hub's DNS-rebinding refusals still show through.
 */
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface CredentialProxy {
  /** The proxy's origin (`http://127.0.0.1:<port>`). */
  url: string;
  close(): Promise<void>;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) end at the proxy. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"]);

/** The headers to send the hub: the client's, its own names for the proxy swapped for the hub's, plus the credentials. */
export function forwardedHeaders(incoming: IncomingHttpHeaders, proxy: URL, hub: URL, credentials: Record<string, string>): Record<string, string | string[]> {
  const ours = new Set([proxy.host, `localhost:${proxy.port}`]);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  if (!incoming.host || ours.has(incoming.host)) out.host = hub.host;
  const origin = incoming.origin;
  if (origin && [...ours].some((h) => origin === `http://${h}`)) out.origin = hub.origin;
  for (const [name, value] of Object.entries(credentials)) out[name.toLowerCase()] = value;
  return out;
}

/** Starts the proxy on a free loopback port, forwarding to `hubUrl` with `credentials` (header name → value). */
export async function credentialProxy(hubUrl: string, credentials: Record<string, string>): Promise<CredentialProxy> {
  const hub = new URL(hubUrl);
  let proxy: URL;
  const server = createServer((req, res) => {
    const upstream = request(
      { host: hub.hostname, port: hub.port, method: req.method, path: req.url, headers: forwardedHeaders(req.headers, proxy, hub, credentials) },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        // Streams (server-sent events) go through as they come.
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
      res.end(`proxy: ${e.message}`);
    });
    // A client that goes away takes its request to the hub with it (an open event stream would otherwise linger).
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    url: proxy.origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
