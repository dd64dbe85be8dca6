/** Host names to addresses over DNS-over-HTTPS (the JSON API Cloudflare's and Google's resolvers speak). */
import { checkTarget, type Resolver, type TargetCheck } from "./target-url";

const RECORD_TYPES = { A: 1, AAAA: 28 } as const;

export function dohResolver(endpoint: string): Resolver {
  return async (host) => {
    const answers = await Promise.all(
      Object.entries(RECORD_TYPES).map(async ([name, code]) => {
        const res = await fetch(`${endpoint}?name=${encodeURIComponent(host)}&type=${name}`, { headers: { Accept: "application/dns-json" }, signal: AbortSignal.timeout(5000) });
        if (!res.ok) throw new Error(`the resolver answered ${res.status}`);
        const body = (await res.json()) as { Answer?: { type: number; data: string }[] };
        return (body.Answer ?? []).filter((a) => a.type === code).map((a) => a.data);
      }),
    );
    return answers.flat();
  };
}

/** A webhook's URL checked as the hub is set up: names resolved with its resolver, private targets only where it allows them. */
export const checkTargetFor = (env: { WEBHOOK_ALLOW_PRIVATE?: string; WEBHOOK_DNS_RESOLVER: string }, url: string): Promise<TargetCheck> =>
  checkTarget(url, { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE === "true", resolve: dohResolver(env.WEBHOOK_DNS_RESOLVER) });
