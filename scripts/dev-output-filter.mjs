/**
 * Which lines of `wrangler dev`'s output `npm start` shows: errors always; after "Ready on", the Worker's own logs,
 * warnings and requests that failed on the hub's side (5xx). Wrangler's banner, bindings table, 2xx–4xx request
 * lines and the offline `Request.cf` fallback are left out. Continuation lines (indented, blank, a stack) follow
 * the line they belong to. `--log-level warn` would also hide the Worker's console.log, so this filters lines instead.
 */
const stripAnsi = (text) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");

const NOISE = [
  /Unable to fetch the `Request\.cf` object/, // no network to workers.cloudflare.com: a placeholder is used, harmlessly
  /Scheduled Workers are not automatically triggered/,
  /^\[wrangler:(info|debug)\]/,
  /^⎔ /,
  /CIMD \(Client ID Metadata Document\) is disabled/, // the OAuth library's note that MCP clients register by DCR here (docs/USING.md)
];

/** A stateful predicate over wrangler dev's lines, and `ready()` once it has said where it listens. */
export function devOutputFilter() {
  let ready = false;
  let lastShown = false;
  const show = (raw) => {
    const line = stripAnsi(raw);
    if (line.trim() === "" || /^\s/.test(line) || /^Error: getaddrinfo /.test(line)) return lastShown;
    let shown;
    if (/Ready on https?:\/\//.test(line)) {
      ready = true;
      shown = false;
    } else if (/✘|\[ERROR\]/.test(line)) {
      shown = true;
    } else if (!ready) {
      shown = false;
    } else {
      const request = line.match(/^\[wrangler:info\] [A-Z]+ \S+ (\d{3})\b/);
      shown = request ? Number(request[1]) >= 500 : !NOISE.some((re) => re.test(line));
    }
    lastShown = shown;
    return shown;
  };
  return { show, ready: () => ready };
}
