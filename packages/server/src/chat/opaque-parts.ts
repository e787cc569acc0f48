/**
 * State an upstream makes that only it can read back: OpenAI's encrypted reasoning and compaction
 * items, Anthropic's thinking signatures and redacted thinking, Gemini's thought signatures on
 * tool calls (docs/agents.md, "Opaque reasoning"; docs/providers.md).
 * It must go back unchanged, to the channel that made it, and to no other: a caller gets it
 * sealed in a token naming that channel (`tgo1.…`), and a turn that sends a token back is pinned
 * to its channel (no failover moves it).
 */
export type OpaqueKind =
  | 'responses_reasoning'
  /** A Responses upstream's compaction item (`POST /v1/responses/compact`): the summary of a history. */
  | 'responses_compaction'
  | 'anthropic_thinking'
  | 'anthropic_redacted_thinking'
  /**
   * Gemini's `extra_content.google.thought_signature` on a tool call of its OpenAI-compatible
   * chat: it travels on the tool call itself, not as a part before a message
   * (providers/openai-compatible/thought-signatures.ts).
   */
  | 'gemini_thought_signature';

export interface OpaquePart {
  /** The channel whose upstream made it. */
  readonly channel: string;
  readonly kind: OpaqueKind;
  /** The upstream's own item or block, exactly as it sent it. */
  readonly payload: Readonly<Record<string, unknown>>;
}

/** An opaque part in a conversation: it belongs before the internal chat message at this index. */
export interface PlacedOpaquePart extends OpaquePart {
  readonly messageIndex: number;
  /** Where the caller sent it (`input.3.encrypted_content`), for errors. */
  readonly path: string;
}

/** An opaque part of an answer, as the caller's protocol shows it. */
export interface OpaqueOutput {
  /** The sealed part (`opaqueToken`): the caller's encrypted content or signature. */
  readonly token: string;
  readonly kind: OpaqueKind;
  /** The reasoning text the upstream showed with it, if any. */
  readonly text: string;
}

const PREFIX = 'tgo1.';

/** Seals a part for the caller: opaque to it, readable by this gateway only to route it back. */
export function opaqueToken(part: OpaquePart): string {
  const sealed = { c: part.channel, k: part.kind, p: part.payload };
  return `${PREFIX}${Buffer.from(JSON.stringify(sealed)).toString('base64url')}`;
}

/** Whether a caller's string is one of this gateway's tokens (it may still be malformed). */
const isOpaqueToken = (value: string) => value.startsWith(PREFIX);

const KINDS = new Set<string>([
  'responses_reasoning',
  'responses_compaction',
  'anthropic_thinking',
  'anthropic_redacted_thinking',
  'gemini_thought_signature',
]);

/** Opens a token; `undefined` when it is not one this gateway made. */
export function readOpaqueToken(token: string): OpaquePart | undefined {
  if (!isOpaqueToken(token)) return undefined;
  let sealed: unknown;
  try {
    sealed = JSON.parse(Buffer.from(token.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof sealed !== 'object' || sealed === null) return undefined;
  const { c, k, p } = sealed as Record<string, unknown>;
  if (typeof c !== 'string' || typeof k !== 'string' || !KINDS.has(k)) return undefined;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return undefined;
  return { channel: c, kind: k as OpaqueKind, payload: p as Record<string, unknown> };
}
