import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";

it("health answers", async () => {
  const res = await exports.default.fetch("https://hub.test/api/v1/health");
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ status: "ok" });
});
