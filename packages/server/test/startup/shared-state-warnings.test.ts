import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import { sharedStateWarnings } from '../../src/startup/shared-state-warnings.js';

/**
 * The risk: an operator adds a second instance on the same PostgreSQL while assets live on the
 * first machine's disk, or while the simulator runs inside each process; uploads and video jobs
 * then fail on the other instance with nothing at start-up saying why.
 */
describe('start-up warnings about state kept by one instance', () => {
  const withS3AndNoSimulator = parseConfig(
    {
      ...defaultConfig,
      upstreams: { remote: { kind: 'openai', base_url: 'http://127.0.0.1:18000/v1' } },
      models: defaultConfig.models.map((model) => ({ ...model, upstream: 'remote' })),
      storage: {
        kind: 's3',
        bucket: 'tollgate-assets',
        access_key_id_env: 'S3_KEY',
        secret_access_key_env: 'S3_SECRET',
      },
    },
    'test',
  );
  const defaults = parseConfig(defaultConfig, 'test');

  it('PostgreSQL with local asset files and the in-process simulator: one warning for each', () => {
    const warnings = sharedStateWarnings(defaults, 'postgres');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/storage\.kind "local".*storage\.kind "s3"/s);
    expect(warnings[1]).toMatch(
      /upstream simulator is the simulator inside this process.*tollgate sim/s,
    );
  });

  it('PostgreSQL with S3 and an external upstream: nothing to warn about', () => {
    expect(sharedStateWarnings(withS3AndNoSimulator, 'postgres')).toEqual([]);
  });

  it('SQLite is one process by design: nothing to warn about', () => {
    expect(sharedStateWarnings(defaults, 'sqlite')).toEqual([]);
    expect(sharedStateWarnings(defaults, 'sqlite', { shareLinkSecretSource: 'file' })).toEqual([]);
  });

  it('PostgreSQL with a share-link secret generated on this machine: a warning naming the variable to set', () => {
    const warnings = sharedStateWarnings(withS3AndNoSimulator, 'postgres', {
      shareLinkSecretSource: 'file',
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/share-link secret.*TOLLGATE_SHARE_LINK_SECRET/s);
    expect(
      sharedStateWarnings(withS3AndNoSimulator, 'postgres', {
        shareLinkSecretSource: 'environment',
      }),
    ).toEqual([]);
  });
});
