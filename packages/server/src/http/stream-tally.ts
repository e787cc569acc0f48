import type { UpstreamChunk } from '../providers/openai-compatible/chat-schemas.js';
import type { GeneratedBytes } from '../chat/token-estimate.js';

/**
 * What the gateway counts of a streamed answer itself, in one walk of each chunk beside the
 * presenter's: the tool calls the answer made (each (choice, call index) pair once: the
 * per-tool-call fee, chat/chat-pricing.ts `withToolCalls`) and, only while the upstream has reported
 * no usage, the UTF-8 bytes it generated (the basis of the local count of a stream that ends
 * without usage: chat/token-estimate.ts `locallyCountedUsage`).
 */
export class StreamTally {
  readonly generated: GeneratedBytes = { visible: 0, reasoning: 0 };
  private readonly calls = new Set<string>();

  /** The tool calls seen so far. */
  get toolCalls(): number {
    return this.calls.size;
  }

  /** Counts one chunk; its bytes only when `countBytes` (no usage reported yet). */
  add(chunk: UpstreamChunk, countBytes: boolean): void {
    const generated = this.generated;
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (countBytes) {
        if (delta.content != null) generated.visible += Buffer.byteLength(delta.content);
        if (delta.refusal != null) generated.visible += Buffer.byteLength(delta.refusal);
        if (delta.reasoning_content != null)
          generated.reasoning += Buffer.byteLength(delta.reasoning_content);
      }
      const calls = delta.tool_calls;
      if (calls == null) continue;
      for (const call of calls) {
        this.calls.add(`${choice.index}:${call.index}`);
        if (!countBytes) continue;
        if (call.function?.name !== undefined)
          generated.visible += Buffer.byteLength(call.function.name);
        if (call.function?.arguments !== undefined)
          generated.visible += Buffer.byteLength(call.function.arguments);
      }
    }
  }
}
