import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch, isPublicAddress } from '../../src/net/guarded-fetch.js';
import { fakeNetwork, startImageUrlGateway, tinyPng } from '../helpers/fake-network.js';
import type { TestGateway } from '../helpers/gateway.js';

describe('guarded fetch of caller-given image URLs', () => {
  it('classifies private, loopback, link-local, mapped and reserved addresses as not public', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])
      expect(isPublicAddress(address), address).toBe(true);
  });

  it('refuses a host that resolves to a private address, before connecting', async () => {
    const network = fakeNetwork({ 'intranet.example': ['10.0.0.7'] }, {});
    await expect(
      guardedFetch('https://intranet.example/a.png', { maxBytes: 1000 }, network),
    ).rejects.toThrow(/private or reserved/);
    expect(network.fetched).toEqual([]);
  });

  it('checks every redirect: a public page that redirects to a loopback address is refused', async () => {
    const network = fakeNetwork(
      { 'cdn.example': ['93.184.216.34'], 'sneaky.example': ['127.0.0.1'] },
      { 'https://cdn.example/a.png': { status: 302, location: 'https://sneaky.example/admin' } },
    );
    await expect(
      guardedFetch('https://cdn.example/a.png', { maxBytes: 1000 }, network),
    ).rejects.toThrow(/private or reserved/);
    expect(network.fetched).toEqual(['https://cdn.example/a.png @ 93.184.216.34']);
  });

  it('refuses http, credentials in the URL, too many redirects and oversized bodies', async () => {
    const loop = fakeNetwork(
      { 'a.example': ['93.184.216.34'] },
      { 'https://a.example/x': { status: 301, location: '/x' } },
    );
    await expect(guardedFetch('http://a.example/x', { maxBytes: 10 }, loop)).rejects.toThrow(
      /only https/,
    );
    await expect(guardedFetch('https://u:p@a.example/x', { maxBytes: 10 }, loop)).rejects.toThrow(
      /credentials/,
    );
    await expect(guardedFetch('https://a.example/x', { maxBytes: 10 }, loop)).rejects.toThrow(
      /too many redirects/,
    );
    const big = fakeNetwork(
      { 'a.example': ['93.184.216.34'] },
      { 'https://a.example/big': { status: 200, body: Buffer.alloc(100) } },
    );
    await expect(guardedFetch('https://a.example/big', { maxBytes: 10 }, big)).rejects.toThrow(
      /larger than/,
    );
  });
});

describe('image URLs in chat, where a model enables them', () => {
  let gateway: TestGateway;
  let key: string;
  const network = fakeNetwork(
    { 'images.example': ['93.184.216.34'], 'internal.example': ['192.168.0.10'] },
    {
      'https://images.example/cat.png': { status: 200, body: tinyPng },
      'https://images.example/moved.png': {
        status: 302,
        location: 'https://internal.example/secret.png',
      },
    },
  );
  beforeAll(async () => {
    gateway = await startImageUrlGateway(network);
    ({ key } = await gateway.account(1_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('fetches the image through the guard and hands the upstream a data URI of its bytes', async () => {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-vision',
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'https://images.example/cat.png' } }],
          },
        ],
      },
    });
    expect(response.statusCode).toBe(200);
    expect(
      response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain(`image/png ${tinyPng.length} bytes`);
  });

  it('refuses a URL that redirects into the private network, with a 400 naming the part', async () => {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-vision',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'https://images.example/moved.png' } },
            ],
          },
        ],
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'messages.0.content.0.image_url.url' },
    });
    expect(network.fetched).not.toContain('https://internal.example/secret.png @ 192.168.0.10');
  });
});
