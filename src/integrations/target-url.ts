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

function specialIpv6(address: string): boolean {
  const host = address.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "::" || host === "::1") return true;
  // IPv4-mapped and -compatible addresses, written dotted or (as URLs normalise them) in hex.
  const mapped = host.match(/^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/);
  if (mapped) return specialIpv4(ipv4(mapped[1]!)!);
  const mappedHex = host.match(/^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (mappedHex) {
    const [hi, lo] = [parseInt(mappedHex[1]!, 16), parseInt(mappedHex[2]!, 16)];
    return specialIpv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  }
  const first = parseInt(host.split(":")[0] || "0", 16);
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast.
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/** Whether an address (v4 or v6, as text) is one a webhook may not reach. */
export function isSpecialAddress(address: string): boolean {
  const v4 = ipv4(address);
  if (v4) return specialIpv4(v4);
  return address.includes(":") ? specialIpv6(address) : false;
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
