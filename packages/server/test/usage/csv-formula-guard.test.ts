import { describe, expect, it } from 'vitest';
import { csvRecord, inertText } from '../../src/usage/csv.js';

/**
 * Risk: free text an operator or caller typed (a top-up reference, a reason) opened as a formula
 * by a spreadsheet reading the statement CSV. Every leading character a spreadsheet may read a
 * formula after — `=`, `+`, `-`, `@`, and the tab, CR and LF it skips — gets a leading `'`.
 */
describe('the CSV formula guard', () => {
  it.each(['=1+1', '+1', '-1', '@SUM(A1)', '\t=1+1', '\r=1+1', '\n=1+1'])(
    'makes %j inert',
    (text) => {
      expect(inertText(text)).toBe(`'${text}`);
    },
  );

  it('leaves ordinary text and null as they are, and quotes a guarded line feed as RFC 4180 does', () => {
    expect(inertText('top-up 42')).toBe('top-up 42');
    expect(inertText(null)).toBeNull();
    expect(csvRecord([inertText('\n=1+1'), 5])).toBe(`"'\n=1+1",5\r\n`);
  });
});
