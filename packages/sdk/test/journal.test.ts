import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal } from '../src/file-journal.js';
import { MemoryJournal, type RequestEntry, type RequestJournal } from '../src/index.js';
import { clientFor, liveGateway, tempDir, type TestGateway } from './helpers/gateway.js';

/*
 * The risk: a request leaves before its idempotency key is saved, so a crash at that moment
 * leaves nothing to recover it by; or a journal file damaged by a crash loses earlier entries.
 */

let gateway: TestGateway | undefined;
let dir: ReturnType<typeof tempDir> | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  dir?.remove();
  dir = undefined;
});

function entry(key: string, state: RequestEntry['state']): RequestEntry {
  return {
    kind: 'request',
    key,
    method: 'POST',
    path: '/embeddings',
    bodyDigest: null,
    state,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
}

describe('journal', () => {
  it.each([
    ['memory', () => new MemoryJournal()],
    ['file', () => new FileJournal(path.join((dir = tempDir()).dir, 'j.jsonl'))],
  ] as const)(
    '%s: every business POST is journaled as sending before it leaves, then updated with the request id',
    async (_name, make) => {
      const live = await liveGateway();
      gateway = live.gateway;
      const { key } = await gateway.account(1_000_000);
      const journal: RequestJournal = make();
      const seenAtSend: (RequestEntry | undefined)[] = [];
      const client = clientFor(live.baseURL, key, {
        journal,
        fetch: async (url, init) => {
          const idempotencyKey = new Headers(init.headers).get('idempotency-key');
          if (idempotencyKey !== null)
            seenAtSend.push((await journal.read(idempotencyKey)) as RequestEntry);
          return fetch(url, init);
        },
      });
      await client.embeddings.create({ model: 'sim-embed', input: 'journaled' });
      await client.rerank.create({ model: 'sim-rerank', query: 'q', documents: ['q'] });
      expect(seenAtSend).toHaveLength(2);
      for (const seen of seenAtSend) {
        expect(seen).toMatchObject({ kind: 'request', state: 'sending', method: 'POST' });
        expect(seen?.bodyDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
        const after = (await journal.read(seen?.key ?? '')) as RequestEntry;
        expect(after).toMatchObject({ state: 'answered', status: 200 });
        expect(after.requestId).toMatch(/^req_/);
      }
    },
  );

  it('a file journal keeps the latest entry per key, ignores a torn last line and sees other writers', async () => {
    dir = tempDir();
    const file = path.join(dir.dir, 'journal.jsonl');
    const first = new FileJournal(file);
    await first.write(entry('a', 'sending'));
    await first.write(entry('b', 'sending'));
    await first.write(entry('a', 'answered'));
    appendFileSync(file, '{"kind":"request","key":"c","sta');

    const second = new FileJournal(file);
    expect(await second.read('a')).toMatchObject({ state: 'answered' });
    expect(await second.read('c')).toBeUndefined();
    expect((await second.entries()).map((item) => item.key)).toEqual(['a', 'b']);
    // The next writer starts on a fresh line, so the torn one cannot swallow its entry.
    await first.write(entry('d', 'unknown'));
    expect(await second.read('d')).toMatchObject({ state: 'unknown' });
    expect(await new FileJournal(file).read('d')).toMatchObject({ state: 'unknown' });
  });
});
