import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What an opaque token is for: a token made for one purpose never verifies for another. */
export type OpaquePurpose =
  | 'responses.reasoning'
  | 'responses.compaction'
  | 'messages.thinking'
  /** Gemini's thought signature on a tool call (chat-continuity.ts). */
  | 'gemini.thought_signature';

const MAC_BYTES = 32;

/**
 * The opaque state real providers hand out and check on the way back — OpenAI's
 * `encrypted_content`, Anthropic's thinking `signature` — bound, as theirs are, to the
 * organisation that asked: here the caller's API key. Two upstreams configured with different
 * keys are two organisations, and a token made for one is refused by the other.
 *
 * Keys: `organisationKey = HMAC-SHA256(secret, "tollgate-sim/" + purpose + "\0" + callerKey)`,
 * where `secret` is the simulator's own (32 random bytes per start unless
 * `SimulatorOptions.secret` fixes it). Tokens are signed, not encrypted: the simulator's
 * payloads hold nothing the caller did not already see.
 */
export class OpaqueState {
  private readonly secret: Buffer;

  constructor(secret: string | Buffer | undefined) {
    this.secret = secret === undefined ? randomBytes(32) : Buffer.from(secret);
  }

  /** An id of the caller's organisation (never the key itself), for per-organisation memory. */
  organisation(callerKey: string): string {
    return this.key('organisation', callerKey).toString('hex').slice(0, 32);
  }

  /** base64url(payload JSON ‖ HMAC-SHA256 of it). */
  seal(purpose: OpaquePurpose, callerKey: string, payload: unknown): string {
    const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
    const mac = createHmac('sha256', this.key(purpose, callerKey)).update(bytes).digest();
    return Buffer.concat([bytes, mac]).toString('base64url');
  }

  /** The payload of a token sealed for this purpose and caller; `undefined` when it does not verify. */
  open(purpose: OpaquePurpose, callerKey: string, token: unknown): unknown {
    if (typeof token !== 'string' || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length <= MAC_BYTES) return undefined;
    const payload = bytes.subarray(0, bytes.length - MAC_BYTES);
    const mac = createHmac('sha256', this.key(purpose, callerKey)).update(payload).digest();
    if (!timingSafeEqual(mac, bytes.subarray(bytes.length - MAC_BYTES))) return undefined;
    try {
      return JSON.parse(payload.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }

  /** A standard-base64 signature of the text (Anthropic's thinking `signature`). */
  sign(purpose: OpaquePurpose, callerKey: string, text: string): string {
    return createHmac('sha256', this.key(purpose, callerKey)).update(text, 'utf8').digest('base64');
  }

  verify(purpose: OpaquePurpose, callerKey: string, text: string, signature: unknown): boolean {
    if (typeof signature !== 'string') return false;
    const given = Buffer.from(signature, 'base64');
    const expected = createHmac('sha256', this.key(purpose, callerKey))
      .update(text, 'utf8')
      .digest();
    return (
      given.length === expected.length &&
      given.toString('base64') === signature &&
      timingSafeEqual(given, expected)
    );
  }

  private key(purpose: string, callerKey: string): Buffer {
    return createHmac('sha256', this.secret)
      .update(`tollgate-sim/${purpose}\0${callerKey}`, 'utf8')
      .digest();
  }
}

/**
 * The caller's API key, which names its organisation: `x-api-key` (Anthropic's header), else
 * the `Authorization: Bearer` token, else `''` — the simulator checks no credentials (as for
 * chat), so a caller without a key is the one anonymous organisation.
 */
export function callerKeyOf(request: IncomingMessage): string {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey;
  const authorization = request.headers.authorization ?? '';
  const bearer = /^Bearer\s+(.+)$/i.exec(authorization);
  return bearer?.[1]?.trim() ?? '';
}
