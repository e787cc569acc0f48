import { afterEach, describe, expect, it } from 'vitest';
import { characterCount } from '../../src/util/characters.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { countCreated } from '../helpers/h3.js';
import type { TestGateway } from '../helpers/gateway.js';
import { finishedTask, startTaskGateway, type TaskBody } from '../helpers/tasks.js';

/**
 * Risk: the gateway and the upstream count a prompt's characters in different units — the
 * gateway in code points, the simulator in UTF-16 units — so a prompt of emoji within the
 * gateway's limit is accepted, held for, and then fails upstream. One unit (code points) for
 * both: at the limit the task succeeds end to end; one over, the gateway refuses it first.
 */
const LIMIT = 32_000;
const EMOJI = '\u{1F600}';

describeEachDialect('prompt characters counted once on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('an emoji prompt at the limit succeeds end to end; one more emoji is 400 naming body.prompt, nothing created', async () => {
    const client = (gateway = await startTaskGateway(dialect));
    const { key } = await client.account(100_000_000);
    const atLimit = EMOJI.repeat(LIMIT);
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: atLimit, size: '256x256' },
    });
    expect(created.statusCode, created.body.slice(0, 300)).toBe(202);
    const task = await finishedTask(client, key, `/v1/images/${created.json<TaskBody>().id}`);
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');

    const before = await countCreated(client);
    const over = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: `${atLimit}${EMOJI}`, size: '256x256' },
    });
    expect(over.statusCode, over.body.slice(0, 300)).toBe(400);
    expect(over.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'body.prompt' } });
    expect(await countCreated(client)).toEqual(before);
  }, 60_000);
});

describe('characterCount', () => {
  it('counts code points: an emoji is one, a lone surrogate is one', () => {
    expect(characterCount('')).toBe(0);
    expect(characterCount('abc')).toBe(3);
    expect(characterCount(EMOJI.repeat(3))).toBe(3);
    expect(characterCount(`a${EMOJI}b`)).toBe(3);
    expect(characterCount('\ud800x')).toBe(2);
    expect(characterCount(`x${EMOJI}`)).toBe([...`x${EMOJI}`].length);
  });
});
