/**
 * A conversation summary the gateway made itself when it compacted a Responses conversation for
 * a channel without a compaction endpoint of its own (docs/agents.md, "Compaction"). The caller
 * gets it as a `compaction` item whose `encrypted_content` is a `tgs1.` token holding the summary
 * text; sent back, the token becomes a user message opening with `SUMMARY_HEADING`, which every
 * channel can read (unlike an upstream's encrypted summary, nothing pins it to one channel). The
 * token is not secret: it holds the caller's own conversation, in the caller's own words and the
 * model's.
 */

/** What the gateway asks a chat upstream for: its words are the gateway's own. */
export const SUMMARY_REQUEST = [
  'Stop working on the task for a moment: the conversation above is about to be replaced by a',
  'summary, and you will continue from that summary alone. Write it now, addressed to yourself:',
  'the goal and the constraints the user set, what has been done and decided (files, commands,',
  'results), what is still open, and the next step. Keep names, paths and figures exact. Answer',
  'with the summary only.',
].join(' ');

/** The line that opens the summary where it stands for the history, so the model reads it as one. */
export const SUMMARY_HEADING =
  'Summary of the conversation so far (it replaced the earlier turns):';

const PREFIX = 'tgs1.';

export function summaryToken(summary: string): string {
  return `${PREFIX}${Buffer.from(JSON.stringify({ s: summary })).toString('base64url')}`;
}

/** The summary a token holds; `undefined` when it is not one of the gateway's summaries. */
export function readSummaryToken(token: string): string | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  try {
    const sealed: unknown = JSON.parse(
      Buffer.from(token.slice(PREFIX.length), 'base64url').toString('utf8'),
    );
    const summary = (sealed as { s?: unknown } | null)?.s;
    return typeof summary === 'string' ? summary : undefined;
  } catch {
    return undefined;
  }
}

/** The user message a summary becomes in the next request. */
export function summaryMessage(summary: string): { role: 'user'; content: string } {
  return { role: 'user', content: `${SUMMARY_HEADING}\n${summary}` };
}
