/**
 * Where a webhook may point (pure but for the resolver it is given): `https`
 * to a public address. Loopback, private, link-local and other special-use
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

/** Whether an IPv4 address is loopback, private, shared, link-local, benchmarking, multicast or reserved. */
function specialIpv4([a, b]: number[]): boolean {
  return (
    a === 0 || a === 10 || a === 127 || a! >= 224 ||
    (a === 100 && b! >= 64 && b! <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && (b === 168 || b === 0)) ||
    (a === 198 && (b === 18 || b === 19))
  );
}

/** An IPv4 address written as two IPv6 groups. */
function hexPair(high: string, low: string): number[] {
  const [hi, lo] = [parseInt(high, 16), parseInt(low, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255];
}

function specialIpv6(address: string): boolean {
  let host = address.toLowerCase().replace(/^\[|\]$/g, "");
  // Resolvers may answer in full (0:0:0:0:0:0:0:1): the URL parser writes every form the one way matched below.
  try {
    host = new URL(`http://[${host}]/`).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return true;
  }
  if (host === "::" || host === "::1") return true;
  // IPv4-mapped and -compatible addresses, written dotted or (as URLs normalise them) in hex.
  const mapped = host.match(/^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return specialIpv4(ipv4(mapped[1]!)!);
  const mappedHex = host.match(/^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (mappedHex) return specialIpv4(hexPair(mappedHex[1]!, mappedHex[2]!));
  const groups = host.split(":");
  const first = parseInt(groups[0] || "0", 16);
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address: it decides.
  const nat64 = host.match(/^64:ff9b::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (nat64) return specialIpv4(hexPair(nat64[1]!, nat64[2]!));
  if (first === 0x2002 && groups.length >= 3) return specialIpv4(hexPair(groups[1] || "0", groups[2] || "0"));
  // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xffc0) === 0xfec0 || (first & 0xff00) === 0xff00;
}

/** Whether an address (v4 or v6, as text) is one a webhook may not reach. */
export function isSpecialAddress(address: string): boolean {
  const v4 = ipv4(address);
  if (v4) return specialIpv4(v4);
  return address.includes(":") ? specialIpv6(address) : false;
}

/**
 * Checked again before each delivery, without resolving (that is done when
 * the webhook is saved): the scheme, written-out addresses and local names.
 */
export function refusedAtDelivery(raw: string): string | null {
  const url = new URL(raw);
  if (url.protocol !== "https:") return "the target is not https";
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if ((ipv4(host) || host.includes(":")) && isSpecialAddress(host)) return "the target is a loopback or private address";
  if (SPECIAL_NAMES.some((re) => re.test(host)) || !host.includes(".")) return "the target is a local name";
  return null;
}

/** Checks a webhook's URL; names are resolved and every address they have must be public. */
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
