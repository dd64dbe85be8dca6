/**
 * Where a webhook may point (pure but for the resolver it is given): `https`
 * to a public address, checked when the webhook is saved and before every
 * delivery. Loopback, private, link-local and other special-use
 * addresses are refused, written out or behind a name, unless the hub runs
 * with WEBHOOK_ALLOW_PRIVATE=true (local development), which also allows
 * `http`.
 */

export type TargetCheck = { ok: true; url: URL } | { ok: false; message: string };

/** Resolves a host name to its addresses (A and AAAA); the hub's is DNS over HTTPS. */
export type Resolver = (host: string) => Promise<string[]>;

const SPECIAL_NAMES = [/^localhost$/, /\.localhost$/, /\.local$/, /\.internal$/, /\.home\.arpa$/, /\.lan$/];

function ipv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.map(Number);
}

/** Whether an IPv4 address is loopback, private, shared, link-local, documentation, benchmarking, multicast or reserved. */
function specialIpv4([a, b, c]: number[]): boolean {
  return (
    a === 0 || a === 10 || a === 127 || a! >= 224 ||
    (a === 100 && b! >= 64 && b! <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && (b === 168 || b === 0)) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113)
  );
}

/** The IPv4 address two 16-bit groups of an IPv6 address carry. */
const v4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255];

/** An IPv6 address as its eight 16-bit groups, or null when it is not one (the URL parser reads every way of writing it). */
function ipv6Groups(address: string): number[] | null {
  let host: string;
  try {
    host = new URL(`http://[${address.replace(/^\[|\]$/g, "")}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  // The parser writes it in hex (dotted IPv4 tails too), with "::" for the longest run of zeros.
  const [head, tail] = host.includes("::") ? host.split("::") : [host, null];
  const parse = (part: string | null | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const before = parse(head);
  const after = parse(tail);
  return tail === null ? before : [...before, ...Array(8 - before.length - after.length).fill(0), ...after];
}

/**
 * Whether an IPv6 address is one a webhook may not reach: loopback and
 * unspecified, unique-local, link- and site-local, multicast, documentation
 * and other special-use blocks, Teredo (2001::/32: it tunnels to any IPv4
 * address, hidden) and local-use NAT64 (64:ff9b:1::/48). Addresses that
 * carry an IPv4 address are judged by it: IPv4-mapped (::ffff:0:0/96),
 * -translated (::ffff:0:0:0/96) and -compatible (::/96), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16).
 */
function specialIpv6(address: string): boolean {
  const g = ipv6Groups(address);
  if (!g || g.length !== 8 || g.some((n) => !Number.isInteger(n) || n < 0 || n > 0xffff)) return true;
  const zeros = (from: number, to: number) => g.slice(from, to).every((n) => n === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return specialIpv4(v4Of(g[6]!, g[7]!));
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return specialIpv4(v4Of(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b) return zeros(2, 6) ? specialIpv4(v4Of(g[6]!, g[7]!)) : true;
  if (g[0] === 0x2002) return specialIpv4(v4Of(g[1]!, g[2]!));
  const [first, second] = [g[0]!, g[1]!];
  return (
    (first === 0x100 && zeros(1, 4)) || // 100::/64, discard-only
    (first === 0x2001 && (second < 0x200 || second === 0xdb8)) || // 2001::/23 (Teredo, benchmarking, ORCHID, ...), 2001:db8::/32 documentation
    (first === 0x3fff && second < 0x1000) || // 3fff::/20, documentation
    first === 0x5f00 || // 5f00::/16, segment routing
    (first & 0xfe00) === 0xfc00 || // fc00::/7, unique local
    (first & 0xffc0) === 0xfe80 || // fe80::/10, link-local
    (first & 0xffc0) === 0xfec0 || // fec0::/10, site-local
    (first & 0xff00) === 0xff00 // ff00::/8, multicast
  );
}

/** Whether an address (v4 or v6, as text) is one a webhook may not reach. */
export function isSpecialAddress(address: string): boolean {
  const v4 = ipv4(address);
  if (v4) return specialIpv4(v4);
  return address.includes(":") ? specialIpv6(address) : false;
}

/**
 * Checks a webhook's URL; names are resolved and every address they have
 * must be public. Run when the webhook is saved and again before every
 * delivery attempt (webhook-endpoint.ts), since a name's addresses change.
 */
export async function checkTarget(raw: string, options: { allowPrivate: boolean; resolve: Resolver }): Promise<TargetCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: "must be an absolute URL" };
  }
  if (url.username || url.password) return { ok: false, message: "must not carry credentials" };
  if (options.allowPrivate) return url.protocol === "https:" || url.protocol === "http:" ? { ok: true, url } : { ok: false, message: "must be an http(s) URL" };
  if (url.protocol !== "https:") return { ok: false, message: "must be an https URL" };
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (ipv4(host) || host.includes(":")) return isSpecialAddress(host) ? { ok: false, message: "must not point at a loopback or private address" } : { ok: true, url };
  if (SPECIAL_NAMES.some((re) => re.test(host)) || !host.includes(".")) return { ok: false, message: "must not point at a local name" };
  let addresses: string[];
  try {
    addresses = await options.resolve(host);
  } catch {
    return { ok: false, message: `could not resolve ${host}` };
  }
  if (addresses.length === 0) return { ok: false, message: `${host} has no address` };
  if (addresses.some(isSpecialAddress)) return { ok: false, message: `${host} resolves to a loopback or private address` };
  return { ok: true, url };
}
