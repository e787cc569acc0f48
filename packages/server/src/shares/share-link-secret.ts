import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SHARE_LINK_SECRET_MIN_LENGTH } from '../config/load.js';

/** The file, in the data directory, that keeps the secret when the environment gives none. */
export const SHARE_LINK_SECRET_FILE = 'share-link-secret';
/** Bytes of a generated secret (HMAC-SHA256 takes any length; 32 is its block of strength). */
const GENERATED_BYTES = 32;

/** The gateway's share-link secret and where it came from (start-up says so on PostgreSQL). */
export interface ShareLinkSecret {
  readonly key: Buffer;
  readonly source: 'environment' | 'file';
}

/**
 * The secret that keys the public tokens of shares asked for from the console
 * (docs/decisions/0016-console-share-links.md). From the environment variable the configuration
 * names (`server.share_link_secret_env`) when it is set; otherwise from `<dataDir>/share-link-secret`,
 * created once with 32 random bytes (mode 0600) so that `npm start` needs no setup and the links
 * survive restarts. Two processes starting together on one data directory end up with the same
 * secret: the first file linked into place wins, the other reads it.
 */
export async function loadShareLinkSecret(options: {
  readonly fromEnvironment: string | undefined;
  readonly dataDir: string;
}): Promise<ShareLinkSecret> {
  if (options.fromEnvironment !== undefined)
    return { key: Buffer.from(options.fromEnvironment, 'utf8'), source: 'environment' };
  const file = path.join(options.dataDir, SHARE_LINK_SECRET_FILE);
  await mkdir(options.dataDir, { recursive: true });
  // Written whole under a temporary name, then linked into place: the file is never seen half
  // written, and `link` refuses to replace one that another process placed first.
  const temporary = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  await writeFile(temporary, `${randomBytes(GENERATED_BYTES).toString('hex')}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
  try {
    await link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary);
  }
  const text = (await readFile(file, 'utf8')).trim();
  // A file edited by hand into something short is not a secret: say so, never use it.
  if (text.length < SHARE_LINK_SECRET_MIN_LENGTH)
    throw new Error(
      `${file} holds no share-link secret (fewer than ${SHARE_LINK_SECRET_MIN_LENGTH} characters): remove it and start again, or set the environment variable named by server.share_link_secret_env`,
    );
  return { key: Buffer.from(text, 'utf8'), source: 'file' };
}
