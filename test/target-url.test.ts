/** Where a webhook may point, table by table and by property (pure; the resolver is a table too). */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { checkTarget, isSpecialAddress } from "../src/integrations/target-url";

const names: Record<string, string[]> = { "public.example": ["93.184.216.34", "2606:2800:220:1::1"], "rebind.example": ["93.184.216.34", "::ffff:10.0.0.1"] };
const resolve = async (host: string) => names[host] ?? [];
const check = (url: string) => checkTarget(url, { allowPrivate: false, resolve });

describe("webhook targets", () => {
  it.each([
    "https://127.0.0.1/x",
    "https://2130706433/x",
    "https://0x7f.1/x",
    "https://10.0.0.1/x",
    "https://100.64.0.1/x",
    "https://172.31.255.255/x",
    "https://192.168.0.1/x",
    "https://169.254.169.254/x",
    "https://0.0.0.0/x",
    "https://224.0.0.1/x",
    "https://[::1]/x",
    "https://[::]/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://[::ffff:a00:1]/x",
    "https://[fc00::1]/x",
    "https://[fe80::1]/x",
    "https://localhost/x",
    "https://localhost./x",
    "https://api.localhost/x",
    "https://printer.local/x",
    "https://db.internal/x",
    "https://intranet/x",
    "https://rebind.example/x",
    "https://unknown.example/x",
    "http://public.example/x",
    "ftp://public.example/x",
    "https://user:pass@public.example/x",
    "not a url",
  ])("refuses %s", async (url) => {
    expect((await check(url)).ok).toBe(false);
  });

  it.each(["https://public.example/hooks/1", "https://93.184.216.34/x", "https://[2606:2800:220:1::1]/x", "https://[2002:5db8:d822::1]/x", "https://172.32.0.1/x", "https://100.128.0.1/x"])("accepts %s", async (url) => {
    expect((await check(url)).ok).toBe(true);
  });

  it("allows http and private targets for local development only", async () => {
    expect((await checkTarget("http://127.0.0.1:8080/x", { allowPrivate: true, resolve })).ok).toBe(true);
    expect((await checkTarget("ftp://127.0.0.1/x", { allowPrivate: true, resolve })).ok).toBe(false);
  });

  it("tells special addresses apart", () => {
    expect(["10.1.2.3", "::1", "0:0:0:0:0:0:0:1", "fd12::3", "fec0::1", "::ffff:192.168.1.1", "64:ff9b::a00:1", "2002:7f00:1::1"].every(isSpecialAddress)).toBe(true);
    expect(["8.8.8.8", "2001:4860:4860::8888"].some(isSpecialAddress)).toBe(false);
  });

  it.each([
    "::ffff:0:7f00:1", // IPv4-translated 127.0.0.1
    "::ffff:0:10.0.0.1",
    "0:0:0:0:ffff:0:c0a8:101",
    "::ffff:0:0",
    "64:ff9b:1::a00:1", // local-use NAT64
    "64:ff9b:1:ffff::808:808",
    "64:ff9b::1:808:808", // in 64:ff9b::/32 but not its /96
    "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
    "2001::1",
    "2001:db8::1",
    "100::1",
    "3fff::1",
  ])("refuses %s, an address that is or hides a special one", (address) => {
    expect(isSpecialAddress(address)).toBe(true);
  });

  it.each(["64:ff9b::808:808", "::ffff:808:808", "2002:808:808::1", "2001:200::1", "3fff:1000::1"])(
    "accepts %s, which carries or is a public address",
    (address) => {
      expect(isSpecialAddress(address)).toBe(false);
    },
  );
});

describe("addresses carrying an IPv4 address, by property", () => {
  const octet = fc.integer({ min: 0, max: 255 });
  const v4 = fc.tuple(octet, octet, octet, octet);
  const hex = ([a, b, c, d]: number[]) => `${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  /** Every way an IPv6 address carries an IPv4 one whole: mapped, translated, compatible, NAT64's well-known prefix, 6to4. */
  const carriers = (a: number[]) => [
    `::ffff:${a.join(".")}`,
    `::ffff:${hex(a)}`,
    `::ffff:0:${hex(a)}`,
    `::${hex(a)}`,
    `64:ff9b::${hex(a)}`,
    `2002:${hex(a)}::1`,
  ];

  it("judges each by the IPv4 address it carries", () => {
    fc.assert(
      fc.property(v4, (a) => {
        const special = isSpecialAddress(a.join("."));
        for (const address of carriers(a)) expect(isSpecialAddress(address), address).toBe(special);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses every address of Teredo and of local-use NAT64, whatever they carry", () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    fc.assert(
      fc.property(fc.array(group, { minLength: 6, maxLength: 6 }), (rest) => {
        expect(isSpecialAddress(`2001:0:${rest.join(":")}`)).toBe(true);
        expect(isSpecialAddress(`64:ff9b:1:${rest.slice(1).join(":")}`)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
