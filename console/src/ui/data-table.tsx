// A table on React Aria Components (keyboard navigation by row and cell, sortable headers, rows as links).
import type { ReactNode } from 'react';
import { Cell, Column, Row, Table, TableBody, TableHeader } from 'react-aria-components';

export interface ColumnDef<T> {
  id: string;
  name: string;
  render: (item: T) => ReactNode;
  isRowHeader?: boolean;
  allowsSorting?: boolean;
}

export interface Sort {
  column: string;
  direction: 'ascending' | 'descending';
}

export function DataTable<T>({
  label,
  columns,
  items,
  rowKey,
  href,
  sort,
  onSortChange,
  empty,
}: {
  label: string;
  columns: ColumnDef<T>[];
  items: T[];
  rowKey: (item: T) => string;
  href?: (item: T) => string;
  sort?: Sort;
  onSortChange?: (sort: Sort) => void;
  empty?: string;
}) {
  return (
    <div className="table-wrap">
      <Table
        aria-label={label}
        sortDescriptor={sort}
        onSortChange={(descriptor) =>
          onSortChange?.({ column: String(descriptor.column), direction: descriptor.direction })
        }
      >
        <TableHeader columns={columns}>
          {(column) => (
            <Column id={column.id} isRowHeader={column.isRowHeader} allowsSorting={column.allowsSorting}>
              {({ sortDirection }) => (
                <>
                  {column.name}
                  {sortDirection ? <span aria-hidden="true">{sortDirection === 'ascending' ? ' ▲' : ' ▼'}</span> : null}
                </>
              )}
            </Column>
          )}
        </TableHeader>
        <TableBody items={items} renderEmptyState={() => <p className="state">{empty ?? 'Nothing here yet.'}</p>}>
          {(item) => (
            <Row id={rowKey(item)} columns={columns} href={href?.(item)}>
              {(column) => <Cell>{column.render(item)}</Cell>}
            </Row>
          )}
        </TableBody>
      </Table>
    </div>
  );
}
