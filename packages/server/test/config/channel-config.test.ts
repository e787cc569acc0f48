import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import { channelsOf } from '../../src/routing/channels.js';

const embedIndex = defaultConfig.models.findIndex((model) => model.id === 'sim-embed');

function withEmbed(edit: (model: Record<string, unknown>) => object): unknown {
  const config = structuredClone(defaultConfig);
  return {
    ...config,
    models: config.models.map((model) =>
      model.id === 'sim-embed' ? edit(model as unknown as Record<string, unknown>) : model,
    ),
  };
}

function withoutUpstream(model: Record<string, unknown>): Record<string, unknown> {
  const { upstream: _upstream, ...rest } = model;
  return rest;
}

/**
 * The risk: a channel list that routes to an upstream that does not exist, two ways of naming
 * the upstream that disagree, or two channels with one id (the admin API could then disable the
 * wrong one) is only found when a request fails. Start-up refuses each, naming the field.
 */
describe('model channels in the configuration', () => {
  it('normalises: defaults for weight, priority, model and id; a single upstream is one channel', () => {
    const config = parseConfig(
      withEmbed((model) => ({
        ...withoutUpstream(model),
        channels: [
          { upstream: 'simulator' },
          { upstream: 'simulator', model: 'other', weight: 3, priority: -1 },
        ],
      })),
      'test',
    );
    const embed = config.models.find((model) => model.id === 'sim-embed');
    const chat = config.models.find((model) => model.id === 'sim-chat');
    if (embed === undefined || chat === undefined) throw new Error('models missing');
    expect(channelsOf(embed)).toEqual([
      expect.objectContaining({ id: 'sim-embed~0', model: 'sim-embed', weight: 1, priority: 0 }),
      expect.objectContaining({ id: 'sim-embed~1', model: 'other', weight: 3, priority: -1 }),
    ]);
    expect(channelsOf(chat)).toEqual([
      expect.objectContaining({ id: 'sim-chat~0', upstream: 'simulator', model: 'sim-chat' }),
    ]);
  });

  it('refuses a channel naming an unknown upstream', () => {
    const raw = withEmbed((model) => ({
      ...withoutUpstream(model),
      channels: [{ upstream: 'simulator' }, { upstream: 'nowhere' }],
    }));
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      `models.${embedIndex}.channels.1.upstream: unknown upstream nowhere`,
    );
  });

  it('refuses upstream and channels together, and neither', () => {
    const both = withEmbed((model) => ({ ...model, channels: [{ upstream: 'simulator' }] }));
    expect(() => parseConfig(both, 'tollgate.json')).toThrow(
      `models.${embedIndex}.upstream: give either upstream or channels, not both`,
    );
    const neither = withEmbed(withoutUpstream);
    expect(() => parseConfig(neither, 'tollgate.json')).toThrow(
      `models.${embedIndex}.upstream: required unless channels are given`,
    );
  });

  it('refuses two channels with one id, even across models', () => {
    const raw = withEmbed((model) => ({
      ...withoutUpstream(model),
      channels: [{ upstream: 'simulator', id: 'sim-chat~0' }],
    }));
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow('duplicate channel id sim-chat~0');
  });

  it('refuses a weight of 0 (a channel never picked) naming the field', () => {
    const raw = withEmbed((model) => ({
      ...withoutUpstream(model),
      channels: [{ upstream: 'simulator', weight: 0 }],
    }));
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      `models.${embedIndex}.channels.0.weight`,
    );
  });
});
