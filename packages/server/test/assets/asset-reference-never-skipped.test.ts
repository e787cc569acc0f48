import { describe, expect, it } from 'vitest';
import { namesAssets } from '../../src/chat/resolve-assets.js';

/**
 * The chat route skips resolving assets when `namesAssets` says a body names none: a reference
 * it missed would reach the upstream as an unresolved `asset` part, never checked or recorded.
 */
describe('a chat body that names an asset is never taken for one that names none', () => {
  const text = { role: 'user', content: 'hello' };

  it('sees top-level assetIds, even malformed (resolveAssets refuses those)', () => {
    expect(namesAssets({ messages: [text], assetIds: ['asset_1'] })).toBe(true);
    expect(namesAssets({ messages: [text], assetIds: [] })).toBe(true);
    expect(namesAssets({ messages: [text], assetIds: 'asset_1' })).toBe(true);
  });

  it('sees an asset part in any message', () => {
    const withPart = {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'asset', asset_id: 'asset_1' },
      ],
    };
    expect(namesAssets({ messages: [text, withPart] })).toBe(true);
  });

  it('finds none in text, image and malformed messages', () => {
    expect(namesAssets({ messages: [text] })).toBe(false);
    expect(
      namesAssets({
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] },
          null,
          'not a message',
        ],
      }),
    ).toBe(false);
    expect(namesAssets({})).toBe(false);
  });
});
