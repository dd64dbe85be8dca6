/**
 * The dashboard's one table of records: columns named once, a `table.data` on a wide screen, and on a phone (under
 * 800 px) each row stacked as a small card whose cells carry their column's name as a label.
 */
import type { ComponentChildren } from "preact";
import "./data-table.css";

export interface Column<T> {
  /** The column's heading, and each cell's label on a phone. */
  label: string;
  cell: (row: T) => ComponentChildren;
  /** The cell naming the row (a row header): first, bold and unlabelled on a phone. */
  rowHeader?: boolean;
  /** The row's buttons: the heading is for screen readers only, and on a phone the cell sits unlabelled at the card's foot. */
  actions?: boolean;
  /** Figures: right-aligned, tabular. */
  numeric?: boolean;
  /** Left out on a phone, where the other columns say enough. */
  wideOnly?: boolean;
}

/** Attributes a row may carry besides its cells: data-* hooks, a class, aria-current. */
export type RowAttributes = Record<string, string | undefined>;

export function DataTable<T>(props: {
  rows: readonly T[];
  /** Falsy entries are left out, so a column can depend on who is looking. */
  columns: readonly (Column<T> | false | null | undefined)[];
  rowKey: (row: T) => string;
  rowAttributes?: (row: T) => RowAttributes;
  /** What follows a row (spanning the table), such as a row's details opened below it. */
  below?: (row: T) => ComponentChildren;
  label?: string;
  class?: string;
}) {
  const columns = props.columns.filter((c): c is Column<T> => !!c);
  const classOf = (c: Column<T>) => [c.numeric && "num", c.wideOnly && "wide-only", c.actions && "actions-cell"].filter(Boolean).join(" ") || undefined;
  return (
    // A table wider than its box scrolls sideways there, so the box takes focus: keys scroll it too.
    <div class="table-scroll" tabIndex={0} role="region" aria-label={props.label ?? "Table"}>
      <table class={`data stacked ${props.class ?? ""}`} aria-label={props.label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" class={classOf(c)}>
                {c.actions ? <span class="visually-hidden">{c.label}</span> : c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => {
            const key = props.rowKey(row);
            const extra = props.below?.(row);
            return [
              <tr key={key} {...props.rowAttributes?.(row)}>
                {columns.map((c) =>
                  c.rowHeader ? (
                    <th key={c.label} scope="row" class={classOf(c)}>
                      {c.cell(row)}
                    </th>
                  ) : (
                    <td key={c.label} class={classOf(c)} data-label={c.actions ? undefined : c.label}>
                      {c.cell(row)}
                    </td>
                  ),
                )}
              </tr>,
              extra ? (
                <tr key={`${key} below`} class="row-below">
                  <td colSpan={columns.length}>{extra}</td>
                </tr>
              ) : null,
            ];
          })}
        </tbody>
      </table>
    </div>
  );
}
