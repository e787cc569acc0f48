import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal } from '../src/file-journal.js';
import { OutcomeUnknownError, type Fetch, type JobEntry } from '../src/index.js';
import { clientFor, countRows, liveGateway, tempDir, type TestGateway } from './helpers/gateway.js';

/*
 * The risk: a script that dies between creating a paid task and settling it creates (and
 * holds, and charges) the task a second time when it is run again, or never settles it. A new
 * client with the same journal must finish the same task: one creation, one charge.
 */

let gateway: TestGateway | undefined;
let journalDir: ReturnType<typeof tempDir> | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  journalDir?.remove();
  journalDir = undefined;
});

const fastWait = { initialMs: 100, maxMs: 400, timeoutMs: 20_000 };

/** A fetch that sends every request, but "crashes" the process (throws) once `when` matches a request after it was sent. */
function crashingFetch(when: (method: string, url: string) => boolean): {
  fetch: Fetch;
  crashed: () => boolean;
} {
  let crashed = false;
  return {
    crashed: () => crashed,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (!crashed && when(init.method ?? 'GET', url)) {
        crashed = true;
        throw new Error('process killed');
      }
      return response;
    },
  };
}

describe('generate after a crash', () => {
  it('crash after the video was created, before its answer was read: a new client finishes it, one task, one charge', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    journalDir = tempDir();
    const file = path.join(journalDir.dir, 'journal.jsonl');
    const { key, accountId } = await gateway.account(1_000_000);
    const input = {
      model: 'sim-video',
      prompt: 'a lighthouse [sim:task_seconds=1]',
      seconds: 2,
      size: '320x240',
    };

    const crash = crashingFetch((method, url) => method === 'POST' && url.endsWith('/v1/videos'));
    const first = clientFor(live.baseURL, key, {
      journal: new FileJournal(file),
      fetch: crash.fetch,
    });
    const error = await first.videos
      .generate(input, { maxAmount: 100_000, wait: fastWait })
      .catch((caught: unknown) => caught);
    expect(crash.crashed()).toBe(true);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(await countRows(gateway, 'tasks')).toBe(1);
    const [job] = (await new FileJournal(file).entries()).filter(
      (entry): entry is JobEntry => entry.kind === 'job',
    );
    expect(job).toMatchObject({ step: 'creating', family: 'video' });

    // "The next run of the script": a new client, the same journal file.
    const second = clientFor(live.baseURL, key, { journal: new FileJournal(file) });
    expect(await second.pendingJobs()).toHaveLength(1);
    const delivery = await second.videos.generate(input, { maxAmount: 100_000, wait: fastWait });
    expect(delivery.task).toMatchObject({ status: 'succeeded', billing: { state: 'settled' } });
    expect(delivery.amount).toBe(40_000);
    expect(delivery.outputs).toHaveLength(1);
    const video = await second.download(delivery.outputs[0]?.contentPath ?? '', {
      range: { start: 4, end: 7 },
    });
    expect(video.status).toBe(206);
    expect(new TextDecoder().decode(await video.bytes())).toBe('ftyp');

    expect(await countRows(gateway, 'tasks')).toBe(1);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 960_000,
      held: 0,
      available: 960_000,
    });
    expect(await second.pendingJobs()).toHaveLength(0);
    await gateway.expectLedgerClean();
  });

  it('crash before the creation left (journaled, never sent): the next run sends it once, under the same key', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    journalDir = tempDir();
    const file = path.join(journalDir.dir, 'journal.jsonl');
    const { key, accountId } = await gateway.account(1_000_000);
    const input = {
      model: 'sim-video',
      prompt: 'fog [sim:task_seconds=0]',
      seconds: 1,
      size: '320x240',
    };

    const first = clientFor(live.baseURL, key, {
      journal: new FileJournal(file),
      fetch: async (url, init) => {
        if (init.method === 'POST' && url.endsWith('/v1/videos')) throw new Error('process killed');
        return fetch(url, init);
      },
    });
    const error = await first.videos
      .generate(input, { maxAmount: 20_000, wait: fastWait })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(await countRows(gateway, 'tasks')).toBe(0);

    const second = clientFor(live.baseURL, key, { journal: new FileJournal(file) });
    const delivery = await second.videos.generate(input, { maxAmount: 20_000, wait: fastWait });
    const record = await second.requests.recover((error as OutcomeUnknownError).idempotencyKey);
    expect(record).toMatchObject({ status: 'accepted', task_id: delivery.task.id });
    expect(await countRows(gateway, 'tasks')).toBe(1);
    expect((await gateway.balance(accountId)).balance).toBe(980_000);
    await gateway.expectLedgerClean();
  });

  it('crash while waiting (task id journaled): the next run settles the same task', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    journalDir = tempDir();
    const file = path.join(journalDir.dir, 'journal.jsonl');
    const { key, accountId } = await gateway.account(1_000_000);
    const input = { model: 'sim-image', prompt: 'two red squares', n: 1, size: '256x256' };

    const crash = crashingFetch(
      (method, url) => method === 'GET' && /\/v1\/images\/task_/.test(url),
    );
    const first = clientFor(live.baseURL, key, {
      journal: new FileJournal(file),
      fetch: crash.fetch,
    });
    await expect(
      first.images.generate(input, { maxAmount: 1_000_000, wait: fastWait }),
    ).rejects.toThrow();
    expect(crash.crashed()).toBe(true);

    const second = clientFor(live.baseURL, key, { journal: new FileJournal(file) });
    const delivery = await second.images.generate(input, { maxAmount: 1_000_000, wait: fastWait });
    expect(delivery.outputs).toHaveLength(1);
    expect(delivery.outputs[0]?.mediaType).toBe('image/png');
    const image = await second.download(delivery.outputs[0]?.contentPath ?? '');
    expect([...(await image.bytes()).subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    expect(await countRows(gateway, 'tasks')).toBe(1);
    const balance = await gateway.balance(accountId);
    expect(balance.held).toBe(0);
    expect(balance.balance).toBe(1_000_000 - delivery.amount);
    await gateway.expectLedgerClean();
  });

  it('crash after the settle was sent: the next run sees it settled and sends nothing more', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    journalDir = tempDir();
    const file = path.join(journalDir.dir, 'journal.jsonl');
    const { key, accountId } = await gateway.account(1_000_000);
    const input = {
      model: 'sim-video',
      prompt: 'waves [sim:task_seconds=0]',
      seconds: 1,
      size: '320x240',
    };

    const crash = crashingFetch((method, url) => method === 'POST' && url.endsWith('/settle'));
    const first = clientFor(live.baseURL, key, {
      journal: new FileJournal(file),
      fetch: crash.fetch,
    });
    await expect(
      first.videos.generate(input, { maxAmount: 20_000, wait: fastWait }),
    ).rejects.toBeInstanceOf(OutcomeUnknownError);

    const sent: string[] = [];
    const second = clientFor(live.baseURL, key, {
      journal: new FileJournal(file),
      fetch: (url, init) => {
        sent.push(`${init.method ?? 'GET'} ${new URL(url).pathname}`);
        return fetch(url, init);
      },
    });
    const delivery = await second.videos.generate(input, { maxAmount: 20_000, wait: fastWait });
    expect(delivery.amount).toBe(20_000);
    expect(sent.filter((line) => line.startsWith('POST'))).toEqual([]);
    expect(await countRows(gateway, 'tasks')).toBe(1);
    expect((await gateway.balance(accountId)).balance).toBe(980_000);
    await gateway.expectLedgerClean();
  });

  it('H3 generate: quote, submit with the echo, wait with refresh=true, settle with the H3 word', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key, accountId } = await gateway.account(10_000_000);
    const sent: string[] = [];
    const client = clientFor(live.baseURL, key, {
      fetch: async (url, init) => {
        sent.push(`${init.method ?? 'GET'} ${new URL(url).pathname}${new URL(url).search}`);
        return fetch(url, init);
      },
    });
    const input = {
      model: 'sim-h3',
      action: 'generate' as const,
      prompt: 'a lighthouse at dusk [sim:task_seconds=1]',
      parameters: { resolution: '480p', ratio: '16:9', duration: 4 },
    };
    const delivery = await client.h3.generate(input, { maxAmount: 80_000, wait: fastWait });
    expect(delivery.task).toMatchObject({ status: 'succeeded', billing: { state: 'settled' } });
    expect(delivery.amount).toBe(80_000);
    expect(delivery.outputs[0]?.contentPath).toBe(`/v1/h3/tasks/${delivery.task.id}/content`);
    const video = await client.h3.content(delivery.task, { range: { last: 10 } });
    expect(video.status).toBe(206);
    expect(sent.some((line) => line.includes('?refresh=true'))).toBe(true);
    expect(sent.filter((line) => line.startsWith('POST'))).toEqual([
      'POST /v1/h3/tasks',
      'POST /v1/h3/tasks',
      `POST /v1/h3/tasks/${delivery.task.id}/settle`,
    ]);
    expect((await gateway.balance(accountId)).balance).toBe(10_000_000 - 80_000);
    await gateway.expectLedgerClean();
  });
});
