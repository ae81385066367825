// A compact read-only table: a header of column titles and a row of cells per item (detail pages, the overview).

import { Table, Tbody, Td, Th, Thead, Tr } from "@patternfly/react-table";
import type { ReactNode } from "react";

export interface SimpleTableProps<T> {
  /** The table's accessible name. */
  label: string;
  columns: string[];
  rows: T[];
  rowKey: (item: T) => string;
  /** The cells of a row, one per column. */
  cells: (item: T) => ReactNode[];
}

export function SimpleTable<T>({ label, columns, rows, rowKey, cells }: SimpleTableProps<T>) {
  return (
    <Table aria-label={label} variant="compact">
      <Thead>
        <Tr>
          {columns.map((column) => (
            <Th key={column}>{column}</Th>
          ))}
        </Tr>
      </Thead>
      <Tbody>
        {rows.map((item) => (
          <Tr key={rowKey(item)}>
            {cells(item).map((cell, i) => (
              <Td key={columns[i]} dataLabel={columns[i]}>
                {cell}
              </Td>
            ))}
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}
