/**
 * A server's capabilities three ways: as its daemon sent them, as declared in the hub, and as matching uses them
 * (the two joined); and the form in which admins declare them.
 */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import type { Capabilities, ServerPage } from "../types";
import { DataTable } from "../ui/data-table";
import { useAction } from "./controls";

const LISTS = [
  ["languages", "Languages", "typescript, python"],
  ["tools", "Tools", "npm, docker"],
  ["environments", "Environments", "linux"],
  ["tags", "Tags", "frontend, backend"],
] as const;

/** The names of a list capability (a repo's are its names). */
const namesOf = (caps: Capabilities | null | undefined, key: (typeof LISTS)[number][0] | "repos"): string[] =>
  key === "repos" ? Object.keys(caps?.repos ?? {}) : (caps?.[key] ?? []);

function Chips({ names }: { names: string[] }) {
  if (names.length === 0) return <span class="muted">—</span>;
  return (
    <span class="chips">
      {names.map((n) => (
        <span class="chip" key={n}>
          {n}
        </span>
      ))}
    </span>
  );
}

/** Reported, declared and effective side by side, one row per capability. */
export function CapabilityTable({ server }: { server: ServerPage }) {
  const columns = [
    ["Sent by the daemon", server.capabilities],
    ["Declared in the hub", server.declared],
    ["Used for matching", server.effective],
  ] as const;
  const rows: [string, (c: Capabilities | null | undefined) => preact.ComponentChild][] = [
    ...LISTS.map(([key, label]) => [label, (c: Capabilities | null | undefined) => <Chips names={namesOf(c, key)} />] as [string, (typeof rows)[number][1]]),
    ["Repos", (c) => <Chips names={namesOf(c, "repos")} />],
    ["Tasks at once", (c) => c?.max_concurrent_tasks ?? <span class="muted">—</span>],
  ];
  return (
    <DataTable
      class="capabilities"
      label="Capabilities"
      rows={rows}
      rowKey={([label]) => label}
      rowAttributes={([label]) => ({ "data-capability": label })}
      columns={[
        { label: "Capability", rowHeader: true, cell: ([label]) => label },
        ...columns.map(([column, caps]) => ({ label: column, cell: ([, cell]: (typeof rows)[number]) => cell(caps) })),
      ]}
    />
  );
}

const split = (text: string) => [
  ...new Set(
    text
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  ),
];

/** The admin's form: comma-separated lists and a number; saving replaces what was declared. */
export function DeclareForm({ server, onSaved, onCancel }: { server: ServerPage; onSaved: (s: ServerPage) => void; onCancel: () => void }) {
  const declared = server.declared;
  const [fields, setFields] = useState<Record<string, string>>(() => ({
    ...Object.fromEntries(LISTS.map(([key]) => [key, namesOf(declared, key).join(", ")])),
    repos: namesOf(declared, "repos").join(", "),
    max: declared?.max_concurrent_tasks?.toString() ?? "",
  }));
  const { run, busy, problem } = useAction();
  const set = (key: string) => (e: Event) => setFields({ ...fields, [key]: (e.currentTarget as HTMLInputElement).value });
  const save = (body: { declared: Capabilities | null }) =>
    run("declare", async () => {
      await ok(hub.PATCH("/api/v1/servers/{id}", { params: { path: { id: server.id } }, body }));
      onSaved(await ok(hub.GET("/api/v1/servers/{id}", { params: { path: { id: server.id } } })));
    });
  const submit = (e: Event) => {
    e.preventDefault();
    const caps: Capabilities = { $schema: "orchestratia/capabilities/v1" };
    for (const [key] of LISTS) if (split(fields[key]!).length) caps[key] = split(fields[key]!);
    const repos = split(fields.repos!);
    // A declared repo keeps what was declared of it (its path, its languages); a new one is just named.
    if (repos.length) caps.repos = Object.fromEntries(repos.map((r) => [r, declared?.repos?.[r] ?? {}]));
    if (fields.max) caps.max_concurrent_tasks = Number(fields.max);
    void save({ declared: caps });
  };
  return (
    <form class="declare" aria-label="Declare capabilities" onSubmit={submit}>
      <p class="muted">Comma-separated. Matching joins these with what the daemon sends; the number of tasks at once declared here wins.</p>
      {LISTS.map(([key, label, example]) => (
        <label key={key}>
          {label}
          <input name={key} value={fields[key]} placeholder={example} onInput={set(key)} />
        </label>
      ))}
      <label>
        Repos
        <input name="repos" value={fields.repos} placeholder="api-gateway, web" onInput={set("repos")} />
      </label>
      <label>
        Tasks at once
        <input name="max_concurrent_tasks" type="number" min={1} max={1000} step={1} value={fields.max} placeholder="1" onInput={set("max")} />
      </label>
      <div class="actions-row">
        <button type="submit" disabled={busy !== null}>
          Save capabilities
        </button>
        <button type="button" class="link" onClick={onCancel}>
          Cancel
        </button>
        {declared && (
          <button type="button" class="danger" disabled={busy !== null} onClick={() => void save({ declared: null })}>
            Forget what was declared
          </button>
        )}
        {problem("declare")}
      </div>
    </form>
  );
}
