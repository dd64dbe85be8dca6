/** A project's usage broken down per model, per agent and per task (the costliest first), as tables. */
import { useState } from "preact/hooks";
import { linkProps } from "../router";
import type { UsageRow } from "../types";
import { DataTable, type Column as TableColumn } from "../ui/data-table";
import { apiTime, exactTokens, tokens, tokensOf, usd } from "../usage-format";

/** How many of the costliest tasks show before "Show all". */
const FIRST_TASKS = 10;

interface Column {
  title: string;
  cell: (r: UsageRow) => preact.ComponentChildren;
  /** Left out on a narrow screen, where the cost and the tokens in all say enough. */
  wide?: boolean;
}

const AMOUNTS: Column[] = [
  { title: "Cost", cell: (r) => usd(r.cost_usd) },
  { title: "Tokens", cell: (r) => <span title={exactTokens(tokensOf(r))}>{tokens(tokensOf(r))}</span> },
  { title: "In", cell: (r) => tokens(r.input_tokens), wide: true },
  { title: "Out", cell: (r) => tokens(r.output_tokens), wide: true },
  { title: "Cache read", cell: (r) => tokens(r.cache_read_tokens), wide: true },
  { title: "Cache write", cell: (r) => tokens(r.cache_write_tokens), wide: true },
  { title: "API time", cell: (r) => apiTime(r.api_ms), wide: true },
];

function UsageTable(props: {
  label: string;
  name: string;
  rows: UsageRow[];
  nameOf: (r: UsageRow) => preact.ComponentChildren;
  keyOf: (r: UsageRow) => string;
  extra?: Column[];
}) {
  const asColumn = (c: Column, numeric: boolean): TableColumn<UsageRow> => ({ label: c.title, cell: c.cell, numeric, wideOnly: c.wide });
  return (
    <DataTable
      class="usage-table"
      label={props.label}
      rows={props.rows}
      rowKey={props.keyOf}
      columns={[
        { label: props.name, rowHeader: true, cell: props.nameOf },
        ...(props.extra ?? []).map((c) => asColumn(c, false)),
        ...AMOUNTS.map((c) => asColumn(c, true)),
      ]}
    />
  );
}

const unknown = (what: string) => <span class="muted">{what}</span>;

export function ModelTable({ rows }: { rows: UsageRow[] }) {
  return (
    <UsageTable
      label="Usage per model"
      name="Model"
      rows={rows}
      keyOf={(r) => r.model ?? ""}
      nameOf={(r) => (r.model ? <code>{r.model}</code> : unknown("not named"))}
    />
  );
}

export function AgentTable({ rows }: { rows: UsageRow[] }) {
  return (
    <UsageTable
      label="Usage per agent"
      name="Agent"
      rows={rows}
      keyOf={(r) => `${r.server_id ?? ""}/${r.agent_type ?? ""}`}
      nameOf={(r) => (
        <>
          {r.server_id ? <a {...linkProps(`/servers/${r.server_id}`)}>{r.server_name ?? r.server_id.slice(0, 8)}</a> : unknown("no server")}
          {r.agent_type && <span class="badge usage-agent-type">{r.agent_type}</span>}
        </>
      )}
    />
  );
}

export function TaskTable({ projectId, rows }: { projectId: string; rows: UsageRow[] }) {
  const [all, setAll] = useState(false);
  const shown = all ? rows : rows.slice(0, FIRST_TASKS);
  return (
    <>
      <UsageTable
        label="Costliest tasks"
        name="Task"
        rows={shown}
        keyOf={(r) => r.task_id ?? ""}
        nameOf={(r) => <a {...linkProps(`/projects/${projectId}/tasks/${r.task_id}`)}>{r.title}</a>}
        extra={[{ title: "Status", cell: (r) => <span class={`status status-${r.status}`}>{r.status?.replace("_", " ")}</span>, wide: true }]}
      />
      {rows.length > FIRST_TASKS && (
        <button type="button" class="link" onClick={() => setAll(!all)}>
          {all ? `Show the ${FIRST_TASKS} costliest` : `Show all ${rows.length} tasks`}
        </button>
      )}
    </>
  );
}
