/**
 * On a narrow screen styles.css lays every table out as a list of rows, one cell a line; each cell
 * then shows its column's name before its value. This gives every body cell of every table its
 * column's name (`data-label`, from the header row), as the console's pages change, so no page has
 * to: the CSS shows it only below the `narrow` breakpoint.
 */
import { useEffect } from 'react';

function headerNames(table: HTMLTableElement): string[] {
  const row = table.tHead?.rows[0];
  if (row === undefined) {
    return [];
  }
  const names: string[] = [];
  for (const cell of Array.from(row.cells)) {
    const name = (cell.textContent ?? '').trim();
    for (let i = 0; i < cell.colSpan; i++) {
      names.push(name);
    }
  }
  return names;
}

function labelTable(table: HTMLTableElement): void {
  const names = headerNames(table);
  if (names.length === 0) {
    return;
  }
  for (const body of Array.from(table.tBodies)) {
    for (const row of Array.from(body.rows)) {
      let column = 0;
      for (const cell of Array.from(row.cells)) {
        const name = cell.colSpan === 1 ? (names[column] ?? '') : '';
        if (name === '') {
          cell.removeAttribute('data-label');
        } else if (cell.getAttribute('data-label') !== name) {
          cell.setAttribute('data-label', name);
        }
        column += cell.colSpan;
      }
    }
  }
}

function labelAll(): void {
  for (const table of Array.from(document.querySelectorAll('main table'))) {
    labelTable(table as HTMLTableElement);
  }
}

/** Keeps the cells of the console's tables labelled (renders nothing). */
export function TableCellLabels() {
  useEffect(() => {
    labelAll();
    // Rows and headers come and go as pages load: label again after each change of the page's elements
    // (setting an attribute is not such a change, so this does not feed itself).
    const observer = new MutationObserver(labelAll);
    observer.observe(document.body, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);
  return null;
}
