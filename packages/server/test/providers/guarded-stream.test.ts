import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  GuardedFetchError,
  guardedStream,
  type GuardedFetchDeps,
} from '../../src/net/guarded-fetch.js';
import { OpenAiImages } from '../../src/providers/openai-compatible/images.js';
import type { TaskInput } from '../../src/providers/task-provider.js';
import type { UpstreamClient } from '../../src/providers/upstream-http.js';

/**
 * A body served by the fake network: `chunks` chunks of `chunkBytes` bytes, produced only when
 * asked for (`pulled` counts the asks), `stallAfter` chunks then silence forever. `destroyed`
 * records that the guard closed it (for a real body: the socket).
 */
class FakeBody implements AsyncIterable<Uint8Array> {
  pulled = 0;
  destroyed = false;
  constructor(
    private readonly chunks: number,
    private readonly chunkBytes: number,
    private readonly stallAfter = Number.POSITIVE_INFINITY,
  ) {}

  destroy(): void {
    this.destroyed = true;
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const chunk = new Uint8Array(this.chunkBytes).fill(7);
    return {
      next: () => {
        if (this.destroyed) return Promise.resolve({ done: true, value: undefined });
        if (this.pulled >= this.stallAfter) return new Promise(() => undefined);
        if (this.pulled >= this.chunks) return Promise.resolve({ done: true, value: undefined });
        this.pulled += 1;
        return Promise.resolve({ done: false, value: chunk });
      },
    };
  }
}

interface FakePage {
  status?: number;
  location?: string;
  contentType?: string;
  contentLength?: number;
  body?: FakeBody;
  /** Never answers (headers never come), ignoring the abort signal. */
  hang?: boolean;
}

/** A fake network: DNS from a table, pages from a table; records every hop and Accept header. */
function fakeNetwork(
  dns: Record<string, string[]>,
  pages: Record<string, FakePage>,
): GuardedFetchDeps & { fetched: string[]; accepts: string[] } {
  const fetched: string[] = [];
  const accepts: string[] = [];
  return {
    fetched,
    accepts,
    resolve: (host) => Promise.resolve(dns[host] ?? []),
    get: (url, address, _signal, accept) => {
      fetched.push(`${url.href} @ ${address}`);
      accepts.push(accept);
      const page = pages[url.href] ?? { status: 404 };
      if (page.hang === true) return new Promise(() => undefined);
      return Promise.resolve({
        status: page.status ?? 200,
        location: page.location,
        contentType: page.contentType ?? 'image/png',
        contentLength: page.contentLength,
        body: page.body ?? new FakeBody(0, 0),
      });
    },
  };
}

const publicHost = { 'cdn.example': ['93.184.216.34'] };

async function readAll(body: Readable): Promise<number> {
  let bytes = 0;
  for await (const chunk of body) bytes += (chunk as Buffer).length;
  return bytes;
}

describe('guarded stream: size, media type and time limits from the caller', () => {
  it('errors mid-stream once more than maxBytes arrive and destroys the source', async () => {
    const body = new FakeBody(10, 100);
    const network = fakeNetwork(publicHost, { 'https://cdn.example/a.png': { body } });
    const opened = await guardedStream(
      'https://cdn.example/a.png',
      { maxBytes: 250, timeoutMs: 5_000 },
      network,
    );
    let seen = 0;
    const reading = (async () => {
      for await (const chunk of opened.body) seen += (chunk as Buffer).length;
    })();
    await expect(reading).rejects.toThrow(GuardedFetchError);
    await expect(reading).rejects.toThrow(/larger than 250 bytes/);
    expect(seen).toBeLessThanOrEqual(250);
    expect(body.destroyed).toBe(true);
    expect(body.pulled).toBe(3);
  });

  it('refuses a declared Content-Length over the cap before reading a byte', async () => {
    const body = new FakeBody(10, 100);
    const network = fakeNetwork(publicHost, {
      'https://cdn.example/big.png': { body, contentLength: 1_000 },
    });
    await expect(
      guardedStream('https://cdn.example/big.png', { maxBytes: 999, timeoutMs: 5_000 }, network),
    ).rejects.toThrow(/larger than 999 bytes \(Content-Length 1000\)/);
    expect(body.pulled).toBe(0);
    expect(body.destroyed).toBe(true);
  });

  it('refuses a Content-Type outside the caller’s media types (or none) before reading, and asks for them', async () => {
    const html = new FakeBody(1, 10);
    const network = fakeNetwork(publicHost, {
      'https://cdn.example/page': { body: html, contentType: 'text/html; charset=utf-8' },
      'https://cdn.example/blob': { contentType: '' },
      'https://cdn.example/ok': { contentType: 'Image/PNG; q=1', body: new FakeBody(1, 10) },
    });
    const options = { maxBytes: 100, timeoutMs: 5_000, mediaTypes: ['image/png', 'image/jpeg'] };
    await expect(guardedStream('https://cdn.example/page', options, network)).rejects.toThrow(
      /answered text\/html, expected image\/png or image\/jpeg/,
    );
    expect(html.pulled).toBe(0);
    expect(html.destroyed).toBe(true);
    await expect(guardedStream('https://cdn.example/blob', options, network)).rejects.toThrow(
      /no Content-Type/,
    );
    const accepted = await guardedStream('https://cdn.example/ok', options, network);
    expect(accepted.contentType).toBe('image/png');
    expect(await readAll(accepted.body)).toBe(10);
    expect(network.accepts).toEqual([
      'image/png, image/jpeg',
      'image/png, image/jpeg',
      'image/png, image/jpeg',
    ]);
  });

  it('the caller’s timeout ends a fetch whose headers never come, even if the network ignores the signal', async () => {
    const network = fakeNetwork(publicHost, { 'https://cdn.example/slow': { hang: true } });
    await expect(
      guardedStream('https://cdn.example/slow', { maxBytes: 100, timeoutMs: 30 }, network),
    ).rejects.toThrow(/longer than 30 ms/);
  });

  it('the caller’s timeout also bounds the body: a stalled body errors and its source is destroyed', async () => {
    const body = new FakeBody(10, 10, 2);
    const network = fakeNetwork(publicHost, { 'https://cdn.example/drip': { body } });
    const opened = await guardedStream(
      'https://cdn.example/drip',
      { maxBytes: 1_000, timeoutMs: 50 },
      network,
    );
    await expect(readAll(opened.body)).rejects.toThrow(/longer than 50 ms/);
    expect(body.destroyed).toBe(true);
  });

  it('the caller’s own abort ends the fetch with the caller’s reason', async () => {
    const body = new FakeBody(10, 10, 1);
    const network = fakeNetwork(publicHost, { 'https://cdn.example/x': { body } });
    const shutdown = new AbortController();
    const opened = await guardedStream(
      'https://cdn.example/x',
      { maxBytes: 1_000, timeoutMs: 60_000, signal: shutdown.signal },
      network,
    );
    const reading = readAll(opened.body);
    shutdown.abort(new Error('worker stopping'));
    await expect(reading).rejects.toThrow('worker stopping');
    expect(body.destroyed).toBe(true);
  });

  it('pulls a 100 MiB body chunk by chunk: the source is never more than a few chunks ahead of the reader', async () => {
    const chunkBytes = 64 * 1024;
    const chunks = 1_600;
    const body = new FakeBody(chunks, chunkBytes);
    const network = fakeNetwork(publicHost, { 'https://cdn.example/huge.mp4': { body } });
    const opened = await guardedStream(
      'https://cdn.example/huge.mp4',
      { maxBytes: 200 * 1024 * 1024, timeoutMs: 60_000 },
      network,
    );
    let bytes = 0;
    let mostBytesAhead = 0;
    for await (const chunk of opened.body) {
      bytes += (chunk as Buffer).length;
      mostBytesAhead = Math.max(mostBytesAhead, body.pulled * chunkBytes - bytes);
    }
    expect(bytes).toBe(100 * 1024 * 1024);
    expect(body.pulled).toBe(chunks);
    // Pulled from the source but not yet read by the consumer: what the stream holds in memory.
    expect(mostBytesAhead).toBeLessThanOrEqual(2 * chunkBytes);
  });
});

describe('guarded stream: the network guard holds on every hop', () => {
  it('follows a redirect to another public host, checking and pinning each hop', async () => {
    const network = fakeNetwork(
      { 'cdn.example': ['93.184.216.34'], 'edge.example': ['8.8.8.8'] },
      {
        'https://cdn.example/a.png': { status: 302, location: 'https://edge.example/a.png' },
        'https://edge.example/a.png': { body: new FakeBody(1, 5) },
      },
    );
    const opened = await guardedStream(
      'https://cdn.example/a.png',
      { maxBytes: 100, timeoutMs: 5_000 },
      network,
    );
    expect(await readAll(opened.body)).toBe(5);
    expect(network.fetched).toEqual([
      'https://cdn.example/a.png @ 93.184.216.34',
      'https://edge.example/a.png @ 8.8.8.8',
    ]);
  });

  it('refuses a redirect into the private network, and too many redirects', async () => {
    const first = new FakeBody(1, 5);
    const network = fakeNetwork(
      { 'cdn.example': ['93.184.216.34'], 'metadata.example': ['169.254.169.254'] },
      {
        'https://cdn.example/a.png': {
          status: 301,
          location: 'https://metadata.example/latest',
          body: first,
        },
        'https://cdn.example/loop': { status: 302, location: '/loop' },
      },
    );
    const options = { maxBytes: 100, timeoutMs: 5_000 };
    await expect(guardedStream('https://cdn.example/a.png', options, network)).rejects.toThrow(
      /private or reserved/,
    );
    expect(first.destroyed).toBe(true);
    await expect(
      guardedStream('https://cdn.example/loop', { ...options, maxRedirects: 2 }, network),
    ).rejects.toThrow(/too many redirects/);
    expect(network.fetched.filter((hop) => hop.includes('metadata'))).toEqual([]);
    expect(network.fetched.filter((hop) => hop.includes('/loop'))).toHaveLength(3);
  });

  it('refuses private addresses before connecting: literal, mixed answers, http', async () => {
    const network = fakeNetwork(
      { 'mixed.example': ['93.184.216.34', '10.0.0.5'] },
      { 'https://mixed.example/a.png': {} },
    );
    const options = { maxBytes: 100, timeoutMs: 5_000 };
    for (const url of [
      'https://[::1]/a.png',
      'https://127.0.0.1/a.png',
      'https://169.254.169.254/latest/meta-data',
      'https://mixed.example/a.png',
    ])
      await expect(guardedStream(url, options, network), url).rejects.toThrow(
        /private or reserved/,
      );
    await expect(guardedStream('http://cdn.example/a.png', options, network)).rejects.toThrow(
      /only https/,
    );
    expect(network.fetched).toEqual([]);
  });
});

describe('image results on a foreign origin are streamed through the guard', () => {
  const input: TaskInput = {
    kind: 'image',
    upstreamModel: 'img-1',
    prompt: 'a lighthouse',
    size: '64x64',
    n: 1,
    quality: undefined,
    seconds: undefined,
    generateAudio: false,
    references: [],
  };

  function upstreamAnswering(url: string): UpstreamClient {
    const unused = (): Promise<never> => Promise.reject(new Error('not used'));
    return {
      postJson: () => Promise.resolve({ json: { data: [{ url }] }, upstreamRequestId: 'up-1' }),
      postStream: unused,
      getJson: unused,
      getBinary: unused,
    };
  }

  async function openFirstOutput(
    provider: OpenAiImages,
  ): Promise<{ body: Readable; mediaType: string | null }> {
    const result = await provider.submit(input, 'task_1');
    if (result.kind !== 'completed') throw new Error('expected a completed submission');
    const output = result.outputs[0];
    if (output === undefined) throw new Error('expected one output');
    return output.open();
  }

  it('streams an image from another origin, asking for image types (or a bare octet-stream label) only', async () => {
    const body = new FakeBody(3, 1_000);
    const network = fakeNetwork(publicHost, {
      'https://cdn.example/out.png': { body, contentType: 'image/png' },
    });
    const provider = new OpenAiImages(
      upstreamAnswering('https://cdn.example/out.png'),
      'https://api.upstream.example/v1',
      { timeoutMs: 5_000, deps: network },
    );
    const opened = await openFirstOutput(provider);
    expect(opened.mediaType).toBe('image/png');
    expect(body.pulled).toBeLessThan(3);
    expect(await readAll(opened.body)).toBe(3_000);
    expect(network.accepts).toEqual([
      'image/png, image/jpeg, image/webp, application/octet-stream',
    ]);
  });

  it('refuses a foreign result that is not an image, and one slower than the upstream’s timeout', async () => {
    const network = fakeNetwork(publicHost, {
      'https://cdn.example/page': { contentType: 'text/html' },
      'https://cdn.example/slow.png': { hang: true },
    });
    const refused = new OpenAiImages(
      upstreamAnswering('https://cdn.example/page'),
      'https://api.upstream.example/v1',
      { timeoutMs: 5_000, deps: network },
    );
    await expect(openFirstOutput(refused)).rejects.toThrow(/text\/html, expected image\/png/);
    const slow = new OpenAiImages(
      upstreamAnswering('https://cdn.example/slow.png'),
      'https://api.upstream.example/v1',
      { timeoutMs: 40, deps: network },
    );
    await expect(openFirstOutput(slow)).rejects.toThrow(/longer than 40 ms/);
  });
});
