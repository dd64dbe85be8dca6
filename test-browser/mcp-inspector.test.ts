/**
 * The MCP inspector's CLI (the official tool for poking an MCP server) against the hub under `wrangler dev`: it
 * lists the tools over Streamable HTTP with an agent's API key, and a person's access token gets theirs.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { AGENT_TOOLS, PERSON_TOOLS } from "../test/mcp-tool-names";
import { adminToken, hub, hubAs, ok, registerAgent } from "./driver";

const inspector = path.resolve(import.meta.dirname, "../node_modules/.bin/mcp-inspector-cli");
/**
 * The CLI looks for its own package.json at `../package.json` from the working directory, then imports it relative to
 * itself: run from a directory whose parent has one, as from the CLI's own build directory (where the check means to be).
 */
const cwd = path.resolve(import.meta.dirname, "../node_modules/@modelcontextprotocol/inspector-cli/build");

/** `mcp-inspector-cli --cli <hub>/mcp --transport http --method <method> --header <header>`: its JSON answer. */
async function inspect(method: string, header: string) {
  const { stdout } = await promisify(execFile)(inspector, ["--cli", `${hub().url}/mcp`, "--transport", "http", "--method", method, "--header", header], {
    timeout: 30_000,
    cwd,
  });
  return JSON.parse(stdout) as { tools: { name: string; annotations: Record<string, boolean> }[] };
}

let admin: string;
let apiKey: string;
beforeAll(async () => {
  admin = await adminToken();
  const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Inspected" } }), 201);
  apiKey = (await registerAgent(admin, project.id)).apiKey;
});

describe("the MCP inspector's CLI", () => {
  it("lists an agent's tools with its API key", async () => {
    const { tools } = await inspect("tools/list", `Authorization: Bearer ${apiKey}`);
    expect(tools.map((t) => t.name)).toEqual(AGENT_TOOLS);
    expect(tools.find((t) => t.name === "fail_task")!.annotations).toMatchObject({ destructiveHint: true });
  });

  it("lists a person's tools with their access token", async () => {
    const { tools } = await inspect("tools/list", `Authorization: Bearer ${admin}`);
    expect(tools.map((t) => t.name)).toEqual(PERSON_TOOLS);
  });
});
