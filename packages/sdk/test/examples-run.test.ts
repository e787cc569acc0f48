import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { uploadClip } from '../examples/assets.js';
import { generateVideo } from '../examples/generate-video.js';
import { understandVideo } from '../examples/h3-steps.js';
import { embedOnce } from '../examples/recover.js';
import { askWithTopUp } from '../examples/settle-after-top-up.js';
import { streamReply } from '../examples/stream.js';
import { mp4 } from '../../server/test/helpers/media.js';
import { clientFor, liveGateway, tempDir, type TestGateway } from './helpers/gateway.js';

/**
 * Risk: README examples that compile but no longer work. Each example (the README shows them
 * verbatim, readme-examples.test.ts) runs here against a gateway listening on loopback, with
 * the simulator upstream, and leaves the money exactly accounted for.
 */
describe('the README examples run against a gateway', () => {
  let gateway: TestGateway;
  let baseURL: string;
  let directory: ReturnType<typeof tempDir>;
  const startDirectory = process.cwd();
  beforeAll(async () => {
    ({ gateway, baseURL } = await liveGateway());
    directory = tempDir();
    process.chdir(directory.dir); // the examples write their files where they run
  });
  afterAll(async () => {
    process.chdir(startDirectory);
    await gateway.expectLedgerClean();
    await gateway.close();
    directory.remove();
  });

  it('embedOnce, streamReply, uploadClip', async () => {
    const { key } = await gateway.account(10_000_000);
    const client = clientFor(baseURL, key);
    expect((await embedOnce(client, 'hello')).data).toHaveLength(1);
    await streamReply(client, 'hi there');
    const file = path.join(directory.dir, 'clip.mp4');
    writeFileSync(file, mp4(3));

    // The first kilobyte, or the whole clip when it is smaller.
    const clip = mp4(3);
    expect(Buffer.from(await uploadClip(client, file))).toEqual(clip.subarray(0, 1024));
  });

  it('generateVideo writes the delivered video; understandVideo answers text', async () => {
    const { accountId, key } = await gateway.account(10_000_000);
    const client = clientFor(baseURL, key);
    await generateVideo(client);
    expect(statSync('lighthouse.mp4').size).toBeGreaterThan(0);
    const source = await client.h3.generate(
      { model: 'sim-h3', action: 'generate', prompt: 'a pier', parameters: { duration: 4 } },
      { maxAmount: 1_000_000 },
    );
    const understood = await understandVideo(client, source.task.id);
    expect(understood.text).toEqual(expect.any(String));
    expect((await gateway.balance(accountId)).held).toBe(0);
  });

  it('askWithTopUp settles after a redeemed code', async () => {
    const { accountId, key } = await gateway.account(0);
    const client = clientFor(baseURL, key);
    const code = await gateway.admin('POST', '/admin/v1/redemption-codes', { amount: 5_000_000 });
    const answer = await askWithTopUp(client, String(code['code']));
    expect(answer).toBeDefined();
    expect((await gateway.balance(accountId)).balance).toBeLessThan(5_000_000);
  });

  it('the configured client of examples/client.ts journals to its file', async () => {
    const { key } = await gateway.account(1_000_000);
    // The example reads its settings from the environment. Test files share a process
    // (vitest.config.ts, `isolate: false`): what is set here is taken back after.
    vi.stubEnv('TOLLGATE_BASE_URL', baseURL);
    vi.stubEnv('TOLLGATE_API_KEY', key);
    try {
      const { client } = await import('../examples/client.js');
      expect((await embedOnce(client, 'journaled')).data).toHaveLength(1);
      expect(existsSync('tollgate-journal.jsonl')).toBe(true);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
