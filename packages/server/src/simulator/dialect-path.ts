/**
 * The providers whose OpenAI-compatible chat the simulator can answer as (an upstream's
 * `dialect`, reached under `/dialect/<name>/v1`: docs/simulator.md): the same answers, with each
 * provider's usage fields, where its stream puts its usage, and what it refuses. Written from the
 * providers' documentation; Tollgate's adapters read them through
 * providers/openai-compatible/provider-dialects.ts.
 */
export type SimulatorDialect = 'openai' | 'deepseek' | 'qwen' | 'glm' | 'kimi' | 'gemini';

const DIALECTS = new Set<string>(['openai', 'deepseek', 'qwen', 'glm', 'kimi', 'gemini']);
const PREFIX = /^\/dialect\/([a-z]+)(\/.*)$/;

/** The dialect a request path names, and the path without it (`openai` without a prefix). */
export function dialectOfPath(path: string): { dialect: SimulatorDialect; path: string } | null {
  const match = PREFIX.exec(path);
  if (match === null) return { dialect: 'openai', path };
  const [, name = '', rest = '/'] = match;
  return DIALECTS.has(name) ? { dialect: name as SimulatorDialect, path: rest } : null;
}
