import type { StorageConfig } from '../config/schema.js';
import { LocalAssetStorage, type AssetStorage } from './local-storage.js';

export interface StorageSecrets {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * The configured asset storage. `dir` holds local objects, or the staging area for S3. The S3
 * client is loaded only for S3 storage: a gateway on local files never pays for importing it
 * (memory at rest: bench/RESULTS.md).
 */
export async function createAssetStorage(
  config: StorageConfig,
  dir: string,
  secrets: StorageSecrets | undefined,
): Promise<AssetStorage & { close?(): void }> {
  if (config.kind === 'local') return new LocalAssetStorage(dir);
  if (secrets === undefined)
    throw new Error(
      'S3 asset storage needs its access key and secret (storage.access_key_id_env, storage.secret_access_key_env)',
    );
  const { S3AssetStorage } = await import('./s3-storage.js');
  return new S3AssetStorage(
    {
      endpoint: config.endpoint,
      region: config.region,
      bucket: config.bucket,
      prefix: config.prefix,
      forcePathStyle: config.force_path_style,
      ...secrets,
    },
    dir,
  );
}
