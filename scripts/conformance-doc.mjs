/**
 * docs/CONFORMANCE.md from the conformance runs' results: the MCP conformance package's scenarios (the results file
 * test-browser/mcp-conformance.test.ts writes) and the A2A TCK's tests as the hub's port of them names them (a vitest
 * JSON report of test/a2a-conformance*.test.ts). Pure: the caller reads and writes the files.
 */

/** The heading line's name of the package, with the version the doc was made with (test-node/conformance-doc.test.ts reads it). */
export const mcpPackageLine = (version) => `MCP: \`@modelcontextprotocol/conformance@${version}\``;

const cell = (text) => String(text).replace(/\|/g, "\\|").replace(/\n/g, " ");
const table = (head, rows) =>
  [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`)].join("\n");

/** One row per scenario and revision: the callers' runs folded together (`pass` only when every caller's run passed). */
function mcpRows(runs) {
  const byKey = new Map();
  for (const run of runs) {
    const key = `${run.scenario}@${run.revision}`;
    byKey.set(key, [...(byKey.get(key) ?? []), run]);
  }
  return [...byKey.values()].map((group) => {
    const failedBy = group.filter((r) => r.result !== "pass").map((r) => r.caller);
    const same = (f) => (new Set(group.map(f)).size === 1 ? String(f(group[0])) : group.map((r) => `${f(r)} (${r.caller})`).join(", "));
    const known = [...new Set(group.flatMap((r) => Object.keys(r.expectedFailures)))];
    return [
      `\`${group[0].scenario}\``,
      group[0].revision,
      failedBy.length ? `**fail** (${failedBy.join(", ")})` : "pass",
      same((r) => r.passed),
      same((r) => r.warned),
      known.length,
    ];
  });
}

/** Each known failure once, with why. */
function knownFailures(runs) {
  const seen = new Map();
  for (const run of runs)
    for (const [check, why] of Object.entries(run.expectedFailures))
      seen.set(`${run.scenario}@${run.revision}:${check}`, [run.scenario, run.revision, check, why]);
  return [...seen.values()].map(([scenario, revision, check, why]) => [`\`${scenario}\``, revision, `\`${check}\``, why]);
}

/**
 * `[<kit test>( | <kit test>)*] {<requirement>(, <requirement>)*} what the hub does` → its parts, or null for a test not
 * named after the kit's. A kit test is pytest's node id (`tests/compatibility/x/test_y.py::TestZ::test_w[jsonrpc]`),
 * which may hold `]`, so the tests are split on " | " rather than matched to the first bracket.
 */
export function kitTestOf(title) {
  const m = /^\[(\S+(?: \| \S+)*)\](?: \{([^}]*)\})? (.*)$/.exec(title);
  if (!m) return null;
  const tests = m[1].split(" | ").map((id) => {
    const cut = id.indexOf("::");
    return cut < 0 ? null : { file: id.slice(0, cut), test: id.slice(cut + 2) };
  });
  if (tests.some((t) => t === null)) return null;
  return { tests, requirements: m[2] ? m[2].split(", ") : [], says: m[3] };
}

/** The A2A rows from a vitest JSON report: one per kit test a hub test stands for, with its requirements and result. */
export function a2aRows(report) {
  const rows = [];
  for (const file of report?.testResults ?? [])
    for (const t of file.assertionResults ?? []) {
      const kit = kitTestOf(t.title);
      const result = t.status === "passed" ? "pass" : `**${t.status}**`;
      for (const test of kit?.tests ?? []) rows.push([`\`${test.file}\``, `\`${test.test}\``, kit.requirements.join(", "), result, kit.says]);
    }
  return rows.sort((a, b) => a[0].localeCompare(b[0]) || a[1].localeCompare(b[1]));
}

function a2aSection(report) {
  const intro =
    "The A2A Technology Compatibility Kit's tests as test/a2a-conformance*.test.ts ports them to the hub (run in workerd), each named " +
    "after the kit's tests it stands for (`[kit file::test] {requirements} ...`).";
  if (!report) return `${intro}\n\nNot run: this file was rendered without the A2A report (\`npm run conformance\` runs it).`;
  const rows = a2aRows(report);
  if (!rows.length) return `${intro}\n\nThe report names no test in the \`[kit file::test]\` form.`;
  const passed = rows.filter((r) => r[3] === "pass").length;
  return `${intro} ${passed} of ${rows.length} pass.\n\n${table(["Kit file", "Test", "Requirements", "Result", "The hub's test"], rows)}`;
}

/** The whole document. `mcp`: the MCP results file's content; `a2a`: a vitest JSON report, or null when it was not run. */
export function conformanceDoc({ mcp, a2a }) {
  const day = mcp.ranAt.slice(0, 10);
  const revisions = [...new Set([...mcp.runs, ...mcp.skipped, ...mcp.notRun].map((r) => r.revision))].sort();
  const summary = revisions.map((rev) => {
    const ran = new Set(mcp.runs.filter((r) => r.revision === rev).map((r) => r.scenario));
    const passing = [...ran].filter((s) => mcp.runs.filter((r) => r.revision === rev && r.scenario === s).every((r) => r.result === "pass")).length;
    const skipped = mcp.skipped.filter((r) => r.revision === rev).length;
    const notRun = mcp.notRun.filter((r) => r.revision === rev).length;
    return `- **${rev}**: ${ran.size} scenarios apply and ran, ${passing} pass (their known failures below); ${skipped} skipped${notRun ? `; ${notRun} apply but were not run` : ""}.`;
  });
  const known = knownFailures(mcp.runs);
  return [
    "# Conformance",
    "",
    "<!-- Generated by `npm run conformance` (scripts/conformance.mjs) from the test results: do not edit by hand. -->",
    "",
    `${mcpPackageLine(mcp.version)}, run ${day} against the hub under \`wrangler dev\` (test-browser/mcp-conformance.test.ts, part of \`npm test\`).`,
    "",
    "## MCP",
    "",
    "Every server scenario of the pinned package, at each protocol revision it belongs to, either applies to the hub or is skipped " +
      "with why (test-browser/mcp-conformance-scenarios.ts). Each one that applies runs twice, as an agent (API key) and as a person " +
      "(personal access token), and passes when exactly its known failures fail: a new failure fails `npm test`, and so does a known " +
      "one that starts to pass.",
    "",
    ...summary,
    "",
    "### Scenarios run",
    "",
    table(["Scenario", "Revision", "Result", "Checks passed", "Warnings", "Known failures"], mcpRows(mcp.runs)),
    "",
    "### Known failures",
    "",
    known.length ? table(["Scenario", "Revision", "Check", "Why"], known) : "None.",
    "",
    ...(mcp.notRun.length
      ? [
          "### Apply, not run",
          "",
          table(
            ["Scenario", "Revision", "Why"],
            mcp.notRun.map((r) => [`\`${r.scenario}\``, r.revision, r.why]),
          ),
          "",
        ]
      : []),
    "### Skipped",
    "",
    table(
      ["Scenario", "Revision", "Why"],
      mcp.skipped.map((r) => [`\`${r.scenario}\``, r.revision, r.why]),
    ),
    "",
    "## A2A",
    "",
    "<!-- A2A table: from the vitest JSON report of test/a2a-conformance*.test.ts (tests named `[kit file::test] {requirements} ...`). -->",
    "",
    a2aSection(a2a),
    "",
  ].join("\n");
}
