import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import { GuardedFetchError, type GuardedFetchDeps } from '../../src/net/guarded-fetch.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';
import type { UpstreamClient } from '../../src/providers/upstream-http.js';

/**
 * Risk: a real Ark upstream answers what the simulator never does — cancelled and expired
 * tasks, malformed or oversized bodies, result URLs on a CDN. If the adapter billed a cancelled
 * task, trusted a body it cannot verify, or read a foreign URL with the upstream's key or
 * without the guard (private hosts, size), callers would be charged wrongly or our network
 * exposed. Recorded bodies, no network.
 */

async function bytesOf(body: Readable): Promise<Buffer> {
  return Buffer.concat((await body.toArray()) as Buffer[]);
}

/** An upstream client answering every read with `json`; binary reads record their path. */
function recorded(json: unknown) {
  const binaryPaths: string[] = [];
  const client: UpstreamClient = {
    postJson: () => Promise.reject(new Error('not used')),
    postStream: () => Promise.reject(new Error('not used')),
    getJson: () => Promise.resolve({ json, upstreamRequestId: 'req-1' }),
    getBinary: (path) => {
      binaryPaths.push(path);
      return Promise.resolve({
        body: Readable.from([Buffer.from('same')]),
        mediaType: 'video/mp4',
        bytes: 4,
      });
    },
  };
  return { client, binaryPaths };
}

const ARK_BASE = 'https://ark.example.com/api/v3';
const task = (fields: Record<string, unknown>) => ({ id: 'cgt-1', status: 'succeeded', ...fields });

describe('recorded bodies', () => {
  it.each(['cancelled', 'expired'])(
    'maps %s to an unbilled failure of that code',
    async (status) => {
      const provider = new ArkH3Tasks(
        recorded(task({ status, usage: { billed: true } })).client,
        ARK_BASE,
        { lookup: false, timeoutMs: 1_000 },
      );
      expect(await provider.poll('cgt-1')).toMatchObject({
        kind: 'failed',
        code: status,
        report: { secondsDelivered: 0, billedFailure: false },
      });
    },
  );

  it.each([
    ['a success without content', task({ duration: 5 })],
    ['a video without its duration', task({ content: { video_url: `${ARK_BASE}/v.mp4` } })],
    ['a text over 100,000 characters', task({ content: { text: 'x'.repeat(100_001) } })],
    ['an unknown status', task({ status: 'paused' })],
  ])(
    'throws an unverifiable-body failure on %s (the worker reads again later)',
    async (_name, body) => {
      const provider = new ArkH3Tasks(recorded(body).client, ARK_BASE, {
        lookup: false,
        timeoutMs: 1_000,
      });
      const error = await provider.poll('cgt-1').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UpstreamFailure);
      expect((error as UpstreamFailure).certainty).toBe('unknown');
    },
  );

  it('reads a video under the upstream base with its client, any other through the guard', async () => {
    const fetched: string[] = [];
    const guarded: GuardedFetchDeps = {
      resolve: (host) =>
        Promise.resolve(host === 'cdn.example.com' ? ['93.184.216.34'] : ['10.0.0.7']),
      get: (url) => {
        fetched.push(url.href);
        return Promise.resolve({
          status: 200,
          location: undefined,
          contentType: 'video/mp4',
          contentLength: 7,
          body: Readable.from([Buffer.from('foreign')]),
        });
      },
    };
    const open = async (url: string) => {
      const { client, binaryPaths } = recorded(task({ duration: 5, content: { video_url: url } }));
      const provider = new ArkH3Tasks(client, ARK_BASE, {
        lookup: false,
        timeoutMs: 1_000,
        guarded,
      });
      const result = await provider.poll('cgt-1');
      if (result.kind !== 'completed') throw new Error('expected completed');
      const opened = await result.outputs[0]?.open();
      return { bytes: await bytesOf(opened?.body ?? Readable.from([])), binaryPaths };
    };
    const own = await open(`${ARK_BASE}/files/v.mp4?sig=1`);
    expect(own).toEqual({ bytes: Buffer.from('same'), binaryPaths: ['/files/v.mp4?sig=1'] });
    const foreign = await open('https://cdn.example.com/v.mp4');
    expect(foreign).toEqual({ bytes: Buffer.from('foreign'), binaryPaths: [] });
    expect(fetched).toEqual(['https://cdn.example.com/v.mp4']);
    await expect(open('https://internal.example.com/v.mp4')).rejects.toBeInstanceOf(
      GuardedFetchError,
    );
  });
});
