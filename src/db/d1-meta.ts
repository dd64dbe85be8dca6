/**
 * D1's own count of the rows each call read and wrote (its `meta`), for every
 * kind of call: `first()` and `raw()` drop the meta from what they return, and
 * a `raw()` cannot be rebuilt from `all()` (a join's duplicate column names
 * collapse into one key of an object). So the count is taken where every call
 * passes with its meta intact: D1's answer on the binding's channel. The
 * binding is copied onto a channel that reads each answer's meta on its way
 * back and hands the answer on unchanged; the binding's own code then turns it
 * into exactly what the caller would have received.
 */

/** Hears the rows one D1 call read and wrote, as D1 reported them. */
export type RowsHeard = (rowsRead: number, rowsWritten: number) => void;

/** The binding's channel to D1, as the runtime's D1 binding holds it (not a public API, hence checked). */
interface D1Channel {
  fetch(input: string, init?: RequestInit): Promise<Response>;
  query?(request: unknown): Promise<unknown>;
}
type D1Binding = D1Database & { fetcher?: D1Channel };

/**
 * The meta is found by its keys in the answer's text rather than by parsing it a second time. Answers come in the
 * rows-and-columns format (or none), where column names are array items and values are strings or numbers, so a
 * quoted key followed by a colon can only be the meta's: a string value holding it would have its quotes escaped.
 */
const META = /"rows_(read|written)":(\d+)/g;

function heardIn(text: string, heard: RowsHeard) {
  let read = 0;
  let written = 0;
  for (const [, kind, n] of text.matchAll(META)) {
    if (kind === "read") read += Number(n);
    else written += Number(n);
  }
  heard(read, written);
}

/** The metas of an answer on the RPC channel (`d1_binding_jsrpc`): one per statement. */
function heardInRpc(answer: unknown, heard: RowsHeard) {
  const results = (answer as { results?: unknown })?.results;
  const list = Array.isArray(results) ? results : (results as { queryResults?: unknown } | undefined)?.queryResults;
  let read = 0;
  let written = 0;
  for (const r of Array.isArray(list) ? list : []) {
    const meta = (r as { meta?: { rows_read?: number; rows_written?: number } })?.meta;
    read += meta?.rows_read ?? 0;
    written += meta?.rows_written ?? 0;
  }
  heard(read, written);
}

function countingChannel(channel: D1Channel, heard: RowsHeard): D1Channel {
  return {
    async fetch(input, init) {
      const answer = await channel.fetch(input, init);
      // Statements go to /query and /execute; anything else (the deprecated dump's bytes) passes untouched.
      if (!/\/(query|execute)\b/.test(new URL(input).pathname)) return answer;
      const text = await answer.text();
      heardIn(text, heard);
      // Same status and headers (a session's bookmark travels in one), same body.
      return new Response(text, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
    },
    ...(typeof channel.query === "function"
      ? {
          async query(request: unknown) {
            const answer = await channel.query!(request);
            heardInRpc(answer, heard);
            return answer;
          },
        }
      : {}),
  };
}

/**
 * A copy of the binding that tells `heard` what each of its calls (and its sessions' calls) read and wrote. A
 * binding of another shape (not the runtime's D1 binding) is returned as it is, and counts nothing: `counts` says so.
 */
export function withRowCounts(d1: D1Database, heard: RowsHeard): { d1: D1Database; counts: boolean } {
  const channel = (d1 as D1Binding).fetcher;
  const Binding = Object.getPrototypeOf(d1)?.constructor as (new (channel: D1Channel) => D1Database) | undefined;
  if (!channel || typeof channel.fetch !== "function" || typeof Binding !== "function") return { d1, counts: false };
  return { d1: new Binding(countingChannel(channel, heard)), counts: true };
}
