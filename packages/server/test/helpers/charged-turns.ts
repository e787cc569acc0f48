import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';

/**
 * Prices that make every chat bill checkable by hand: 1 micro-yuan per input token, 3 per output
 * token, so a charge is prompt + 3 x completion of the record's usage, exactly.
 */
export const ONE_IN_THREE_OUT = {
  input_per_million_tokens: 1_000_000,
  output_per_million_tokens: 3_000_000,
};

/** What the turn tests read of a request's record. */
export interface TurnRecord {
  status: string;
  usage: Record<string, number> | null;
  bill: { amount: number } | null;
  reserve: { state: string } | null;
  error: { code: string; param?: string; message: string } | null;
  /** The answer as recorded (a replay's body). */
  result: unknown;
}

/**
 * Turns sent by one key of one account at `ONE_IN_THREE_OUT` prices, each checked from the
 * outside: its status, its record, its bill and the balance.
 */
export function chargedTurns(gateway: TestGateway, key: string, accountId: string) {
  const recordOf = async (response: { headers: Record<string, unknown> }) =>
    (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<TurnRecord>();

  return {
    /** 200, the record succeeded, charged prompt + 3 x completion and no more: the answer's body. */
    charged: async (
      url: string,
      body: Record<string, unknown>,
    ): Promise<{ body: string; record: TurnRecord }> => {
      const before = (await gateway.balance(accountId)).balance;
      const response = await gateway.call('POST', url, { key, body });
      expect(response.statusCode, response.body).toBe(200);
      const record = await recordOf(response);
      expect(record.status).toBe('succeeded');
      const usage = record.usage ?? {};
      const amount = (usage['prompt_tokens'] ?? 0) + 3 * (usage['completion_tokens'] ?? 0);
      expect(amount).toBeGreaterThan(0);
      expect(record.bill?.amount).toBe(amount);
      expect((await gateway.balance(accountId)).balance).toBe(before - amount);
      return { body: response.body, record };
    },

    /**
     * Refused with `status`: the record failed and released, nothing charged, and the answer
     * names the field the record names (a replay answers from the record).
     */
    refused: async (
      url: string,
      body: Record<string, unknown>,
      status: number,
    ): Promise<{ body: string; record: TurnRecord }> => {
      const before = await gateway.balance(accountId);
      const response = await gateway.call('POST', url, { key, body });
      expect(response.statusCode, response.body).toBe(status);
      const record = await recordOf(response);
      expect(record.status).toBe('failed');
      expect(record.bill).toBeNull();
      expect(record.reserve?.state).toBe('released');
      expect(await gateway.balance(accountId)).toEqual(before);
      if (record.error?.param !== undefined) expect(response.body).toContain(record.error.param);
      return { body: response.body, record };
    },
  };
}

/**
 * Two Gemini upstreams of two organisations (the simulator signs for the caller's key, so each
 * verifies only its own signatures) and a model `gemini-pair` with a channel on each: `gemini-a`
 * first (priority), `gemini-b` second. For tests of where a thought signature may go back.
 */
export function geminiChannelPair<Model extends object>(
  model: (id: string, upstream: string) => Model,
) {
  const organisation = (keyEnv: string) => ({
    kind: 'simulator' as const,
    dialect: 'gemini' as const,
    api_key_env: keyEnv,
  });
  return {
    upstreams: {
      'gemini-org-a': organisation('SIM_GEMINI_A'),
      'gemini-org-b': organisation('SIM_GEMINI_B'),
    },
    pair: {
      ...model('gemini-pair', 'gemini-org-a'),
      upstream: undefined,
      channels: [
        { id: 'gemini-a', upstream: 'gemini-org-a', model: 'gemini-pair', priority: 10 },
        { id: 'gemini-b', upstream: 'gemini-org-b', model: 'gemini-pair', priority: 0 },
      ],
    },
    upstreamKeys: { 'gemini-org-a': 'org-a-key', 'gemini-org-b': 'org-b-key' },
  };
}
