/**
 * A project with something on every page, made through the API as people and agents make it: tasks in several states
 * (one waiting on a question, one failed, one done with usage), two registered agents with sessions, a permission log,
 * a code scan, an approval rule, a webhook, a budget, a second member and an open invite.
 */
import srcSnapshot from "../test/fixtures/code-health-src.json";
import { addMember, call, hubAs, ok, registerAgent } from "./driver";

export interface SeededProject {
  projectId: string;
  /** The task waiting on a person's answer (its page shows the question). */
  taskId: string;
  serverId: string;
  sessionId: string;
  webhookId: string;
  inviteUrl: string;
  /** Stops the agents' heartbeats. */
  stop(): void;
}

/** How often the seeded agents say they are alive: without it the hub takes them offline and fails their running tasks. */
const HEARTBEAT_MS = 20_000;

export async function seedProject(admin: string, name: string): Promise<SeededProject> {
  const asAdmin = hubAs({ token: admin });
  const project = await ok(asAdmin.POST("/api/v1/projects", { body: { name, description: "The customer portal and its billing." } }), 201);
  const projectId = project.id;
  const builder = await registerAgent(admin, projectId, `builder-${Date.now().toString(36)}`);
  const reviewer = await registerAgent(admin, projectId, `reviewer-${Date.now().toString(36)}`);
  const asAgent = hubAs({ apiKey: builder.apiKey });
  const beat = () => Promise.all([builder, reviewer].map((a) => hubAs({ apiKey: a.apiKey }).POST("/api/v1/servers/heartbeat", { body: {} })));
  await beat();
  const heartbeats = setInterval(() => void beat(), HEARTBEAT_MS);

  const task = async (title: string, priority: "low" | "normal" | "high" | "urgent" = "normal") =>
    (await ok(asAdmin.POST("/api/v1/tasks", { body: { project_id: projectId, title, priority, spec: `## ${title}\n\nAs described in the plan.` } }), 201)).id;
  const claim = async (id: string, start = true) => {
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { params: { path: { id } }, body: { server_name: builder.name } }));
    if (start) await ok(asAgent.POST("/api/v1/server/tasks/{id}/start", { params: { path: { id } } }));
  };

  await task("Write the onboarding guide", "low");
  await task("Add a dark theme to the invoice PDF");
  const done = await task("Migrate the billing tables", "high");
  await claim(done);
  const usage = { model: "claude-sonnet-4-5", input_tokens: 12_000, output_tokens: 3_000, cost_usd: 0.42 };
  await ok(
    asAgent.POST("/api/v1/server/tasks/{id}/complete", { params: { path: { id: done } }, body: { result: "Migrated, with a rollback script.", usage } }),
  );
  const failed = await task("Rotate the payment provider's keys", "urgent");
  await claim(failed);
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/fail", { params: { path: { id: failed } }, body: { error: "The provider refused the old key." } }));
  const assigned = await task("Review the pricing page copy");
  await claim(assigned, false);
  const running = await task("Fix the flaky sign-in test", "high");
  await claim(running);
  const asking = await task("Refund the duplicate charge", "high");
  await claim(asking);
  await ok(
    asAgent.POST("/api/v1/server/tasks/{id}/help", {
      params: { path: { id: asking } },
      body: { question: "Refund to the card or as store credit?", intervention_type: "question", context: { order: "A-1042" } },
    }),
  );

  const { sessions } = await ok(asAgent.GET("/api/v1/server/sessions"));
  const sessionId = sessions.find((s) => s.name === `${builder.name}-worker`)!.id;
  const rule = await call(
    "/api/v1/approval-rules",
    { token: admin, body: { name: "no force pushes", tool_pattern: "Bash", param_pattern: "*--force*", action: "deny", scope_type: "tenant" } },
    201,
  );
  const logged = (tool_name: string, tool_input: Record<string, unknown>, decision: string, matched_rule_id: string | null = null) => ({
    session_id: sessionId,
    project_id: projectId,
    tool_name,
    tool_input,
    decision,
    matched_rule_id,
    reason: matched_rule_id ? "Blocked by rule: no force pushes" : null,
    agent_name: "claude",
    created_at: new Date().toISOString(),
  });
  const posted = await call(
    "/api/v1/server/permissions/log",
    {
      apiKey: builder.apiKey,
      body: { entries: [logged("Read", { file_path: "/repo/package.json" }, "asked"), logged("Bash", { command: "git push --force" }, "denied", rule.id)] },
    },
    201,
  );
  if (posted.accepted !== 2) throw new Error(`The permission log took ${JSON.stringify(posted)}`);
  await call("/api/v1/server/architecture/snapshot", { apiKey: builder.apiKey, body: { project_id: projectId, snapshot: srcSnapshot } }, 201);

  const path = { id: projectId };
  const webhook = await ok(asAdmin.POST("/api/v1/projects/{id}/webhooks", { params: { path }, body: { url: "http://127.0.0.1:9/hooks/portal" } }), 201);
  const actions = [
    { at_percent: 50, action: "warn" as const },
    { at_percent: 100, action: "stop" as const },
  ];
  await ok(asAdmin.POST("/api/v1/projects/{id}/budgets", { params: { path }, body: { scope: "project", period: "day", limit_usd: 5, actions } }), 201);

  const member = { email: `member-${Date.now().toString(36)}@example.com`, password: "member-password-1", role: "member" as const };
  await addMember(admin, projectId, (await ok(asAdmin.POST("/api/v1/users", { body: member }), 201)).id);
  const invite = await ok(
    asAdmin.POST("/api/v1/invites", { body: { role: "member", email: "invitee@example.com", projects: [{ project_id: projectId, role: "member" }] } }),
    201,
  );
  return { projectId, taskId: asking, serverId: builder.id, sessionId, webhookId: webhook.id, inviteUrl: invite.url, stop: () => clearInterval(heartbeats) };
}
