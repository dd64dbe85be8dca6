/** Where a webhook may point, table by table (pure; the resolver is a table too). */
import { describe, expect, it } from "vitest";
import { checkTarget, isSpecialAddress, refusedAtDelivery } from "../src/integrations/target-url";

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

  it("checks the scheme, addresses and names again before each delivery", () => {
    expect(refusedAtDelivery("http://public.example/x")).toContain("https");
    expect(refusedAtDelivery("https://localhost./x")).toContain("local name");
    expect(refusedAtDelivery("https://[::ffff:7f00:1]/x")).toContain("private");
    expect(refusedAtDelivery("https://public.example/x")).toBeNull();
  });

  it("allows http and private targets for local development only", async () => {
    expect((await checkTarget("http://127.0.0.1:8080/x", { allowPrivate: true, resolve })).ok).toBe(true);
    expect((await checkTarget("ftp://127.0.0.1/x", { allowPrivate: true, resolve })).ok).toBe(false);
  });

  it("tells special addresses apart", () => {
    expect(["10.1.2.3", "::1", "0:0:0:0:0:0:0:1", "fd12::3", "fec0::1", "::ffff:192.168.1.1", "64:ff9b::a00:1", "2002:7f00:1::1"].every(isSpecialAddress)).toBe(true);
    expect(["8.8.8.8", "2001:4860:4860::8888"].some(isSpecialAddress)).toBe(false);
  });
});
