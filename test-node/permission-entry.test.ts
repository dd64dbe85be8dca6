/** The permission log names the rule that decided a call once, however the daemon worded its reason. */
import { describe, expect, it } from "vitest";
import { ruleAndReason } from "../web/src/permission-entry";

describe("ruleAndReason", () => {
  it("leads with the reason's verb and drops a reason that only repeats the rule", () => {
    expect(ruleAndReason("Blocked by rule: no force pushes", true)).toEqual({ ruleLead: "Blocked by rule", reason: null });
    expect(ruleAndReason("Auto-approved by rule: npm tests", true)).toEqual({ ruleLead: "Auto-approved by rule", reason: null });
  });

  it("keeps a reason that says something else beside the rule", () => {
    expect(ruleAndReason("Auto-approved", true)).toEqual({ ruleLead: "rule", reason: "Auto-approved" });
    expect(ruleAndReason(null, true)).toEqual({ ruleLead: "rule", reason: null });
  });

  it("keeps the reason of a call no rule decided", () => {
    expect(ruleAndReason("The person answered yes", false)).toEqual({ ruleLead: "", reason: "The person answered yes" });
  });
});
