import type { ReactNode } from 'react';
import { Listed } from './Listed.js';

/** One column of a DataTable: its header and how a row fills its cell. */
export interface Column<Row> {
  /** React's key for the column (unique in the table). */
  readonly id: string;
  readonly header: ReactNode;
  /** The header is read by screen readers only (a column of buttons). */
  readonly hiddenHeader?: boolean;
  /** Right-aligned figures (amounts, counts). */
  readonly number?: boolean;
  readonly cell: (row: Row) => ReactNode;
  /** Attributes of the cell (`data-…` markers that tests and styles find). */
  readonly cellAttributes?: (row: Row) => Record<string, string>;
}

/**
 * A table of rows, or what stands instead while there are none to show (Listed: loading, `empty`,
 * nothing once the read `failed`). Each row gets `rowKey` as React key and `rowAttributes`
 * (`data-key-id` …). A `label` makes the scrolling wrapper a named, focusable region, so that a
 * keyboard can scroll a table wider than a phone.
 */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  rowAttributes,
  empty,
  failed = false,
  label,
}: {
  rows: readonly Row[] | null;
  columns: readonly Column<Row>[];
  rowKey: (row: Row) => string;
  rowAttributes?: (row: Row) => Record<string, string>;
  empty: ReactNode;
  failed?: boolean;
  label?: string;
}) {
  const region = label === undefined ? {} : { tabIndex: 0, role: 'region', 'aria-label': label };
  return (
    <Listed items={rows} empty={empty} failed={failed}>
      {(shown) => (
        <div className="table-wrap" {...region}>
          <table>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th scope="col" key={column.id}>
                    {column.hiddenHeader === true ? (
                      <span className="visually-hidden">{column.header}</span>
                    ) : (
                      column.header
                    )}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={rowKey(row)} {...rowAttributes?.(row)}>
                  {columns.map((column) => (
                    <td
                      key={column.id}
                      className={column.number === true ? 'number' : undefined}
                      {...column.cellAttributes?.(row)}
                    >
                      {column.cell(row)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Listed>
  );
}
