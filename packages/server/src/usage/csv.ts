/**
 * CSV as RFC 4180 writes it: fields separated by commas, records ended by CRLF, a field quoted
 * (with its quotes doubled) when it holds a comma, a quote, CR or LF. `null` is an empty field.
 */
export type CsvCell = string | number | null;

export function csvRecord(cells: readonly CsvCell[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}

function csvField(cell: CsvCell): string {
  if (cell === null) return '';
  const text = String(cell);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * Free text (a reason, a top-up reference an operator typed) as a spreadsheet cannot take it for
 * a formula: text starting with `=`, `+`, `-`, `@`, tab, CR or LF gets a leading `'` (OWASP, "CSV
 * injection"). Only for text columns: numbers are written as they are, signs included.
 */
export function inertText(text: string | null): string | null {
  return text !== null && /^[=+\-@\t\r\n]/.test(text) ? `'${text}` : text;
}
