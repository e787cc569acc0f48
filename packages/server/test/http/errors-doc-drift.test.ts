import { readFileSync } from 'node:fs';
import { errorStatus } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';

/** docs/errors.md and the ErrorCode table must list the same codes with the same statuses. */
describe('error code documentation', () => {
  it('lists every code with its status, and nothing else', () => {
    const doc = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
    const documented: Record<string, number> = {};
    for (const match of doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|/gm))
      documented[match[1] ?? ''] = Number(match[2]);
    expect(documented).toEqual(errorStatus);
  });
});
