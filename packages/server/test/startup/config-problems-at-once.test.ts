import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { loadSettings, parseConfig } from '../../src/config/load.js';

/** The problem lines of the configuration error for `raw` (without the header), or `valid`. */
function problems(raw: unknown): string[] | 'valid' {
  try {
    parseConfig(raw, 'tollgate.json');
    return 'valid';
  } catch (error) {
    const [header, ...lines] = (error as Error).message.split('\n');
    expect(header).toBe('invalid configuration in tollgate.json:');
    return lines.map((line) => line.trim());
  }
}

function withModels(
  edit: (model: (typeof defaultConfig.models)[number]) => object | undefined,
): object {
  const models = structuredClone(defaultConfig).models.map((model) => edit(model) ?? model);
  return { ...structuredClone(defaultConfig), models };
}

const index = (id: string) => defaultConfig.models.findIndex((model) => model.id === id);

/**
 * A configuration fixed one error at a time costs an operator one restart per mistake: the
 * cross-field rules (unknown upstream, duplicate id, price rules) used to run only once every
 * field parsed. Every problem of a file is reported at once, each with its dotted path, and
 * nothing is reported twice or made up by the best-effort pass.
 */
describe('every problem of a configuration file at once', () => {
  it('the built-in configuration is valid', () => {
    expect(problems(defaultConfig)).toBe('valid');
  });

  it('a type error elsewhere does not hide an unknown upstream or a missing price', () => {
    const raw = {
      ...withModels((model) =>
        model.id === 'sim-embed'
          ? { ...model, upstream: 'nowhere' }
          : model.id === 'sim-rerank'
            ? { ...model, prices: { ...model.prices, input_per_million_tokens: undefined } }
            : undefined,
      ),
      request_retention_days: -1,
    };
    expect(problems(raw)).toEqual([
      'request_retention_days: Too small: expected number to be >0',
      `models.${index('sim-embed')}.upstream: unknown upstream nowhere`,
      `models.${index('sim-rerank')}.prices.input_per_million_tokens: required`,
    ]);
  });

  it('a model with a bad field still has its unknown upstream named, without made-up price rules', () => {
    const raw = withModels((model) =>
      model.id === 'sim-image'
        ? { ...model, upstream: 'gone', max_images: 'four', colour: 'red' }
        : undefined,
    );
    const at = index('sim-image');
    expect(problems(raw)).toEqual([
      `models.${at}.max_images: Invalid input: expected number, received string`,
      `models.${at}: Unrecognized key: "colour"`,
      `models.${at}.upstream: unknown upstream gone`,
    ]);
  });

  it('a duplicate model id is found next to a broken upstream', () => {
    const config = structuredClone(defaultConfig);
    const raw = {
      ...config,
      upstreams: { ...config.upstreams, spare: { kind: 'openai' } },
      models: [...config.models, { ...config.models[0] }],
    };
    expect(problems(raw)).toEqual([
      'upstreams.spare.base_url: required unless kind is simulator',
      `models.${config.models.length}.id: duplicate model id ${config.models[0]?.id}`,
    ]);
  });

  it('a file that is not the right shape at all gets its field errors, and no crash', () => {
    expect(problems({ upstreams: [], models: 'none' })).toEqual([
      'upstreams: Invalid input: expected record, received array',
      'models: Invalid input: expected array, received string',
    ]);
    expect(problems(null)).toEqual(['(root): Invalid input: expected object, received null']);
  });

  it('every secret the file names that is not set, at once', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-secrets-'));
    try {
      const file = path.join(dir, 'tollgate.json');
      writeFileSync(
        file,
        JSON.stringify({
          ...defaultConfig,
          upstreams: {
            ...defaultConfig.upstreams,
            openai: {
              kind: 'openai',
              base_url: 'https://api.example.com/v1',
              api_key_env: 'OPENAI_KEY',
            },
          },
          storage: {
            kind: 's3',
            bucket: 'assets',
            access_key_id_env: 'S3_KEY_ID',
            secret_access_key_env: 'S3_SECRET',
          },
        }),
      );
      expect(() => loadSettings({ TOLLGATE_CONFIG: file, S3_KEY_ID: 'id' })).toThrow(
        [
          'environment variables named by the configuration are not set or empty:',
          '  upstreams.openai.api_key_env: environment variable OPENAI_KEY is not set',
          '  storage.secret_access_key_env: environment variable S3_SECRET is not set',
        ].join('\n'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a secret variable that is set but empty is reported as empty, not as unset', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-secrets-'));
    try {
      const file = path.join(dir, 'tollgate.json');
      writeFileSync(
        file,
        JSON.stringify({
          ...defaultConfig,
          upstreams: {
            ...defaultConfig.upstreams,
            openai: {
              kind: 'openai',
              base_url: 'https://api.example.com/v1',
              api_key_env: 'OPENAI_KEY',
            },
          },
        }),
      );
      expect(() => loadSettings({ TOLLGATE_CONFIG: file, OPENAI_KEY: '' })).toThrow(
        'upstreams.openai.api_key_env: environment variable OPENAI_KEY is empty',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
