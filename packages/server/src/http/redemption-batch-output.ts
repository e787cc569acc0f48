import type { FastifyReply } from 'fastify';
import type { RedemptionCodeView } from '../accounts/account-service.js';
import { statementFormat } from '../usage/statement-output.js';
import { csvRecord } from '../usage/csv.js';

/**
 * A new batch of redemption codes, answered once (the codes are stored hashed): JSON
 * `{"object": "list", "data": [code]}`, or CSV (`id,code,amount,expires_at`) when the request
 * asks for `text/csv`, as a download — the file an operator hands out.
 */
export function answerRedemptionBatch(
  reply: FastifyReply,
  accept: string | undefined,
  codes: readonly RedemptionCodeView[],
): unknown {
  void reply.code(201).header('cache-control', 'no-store');
  if (statementFormat(undefined, accept) !== 'csv') return { object: 'list', data: codes };
  const lines = [csvRecord(['id', 'code', 'amount', 'expires_at'])];
  for (const code of codes)
    lines.push(csvRecord([code.id, code.code, code.amount, code.expires_at]));
  return reply
    .header('content-type', 'text/csv; charset=utf-8; header=present')
    .header(
      'content-disposition',
      `attachment; filename="redemption-codes-${codes[0]?.id ?? 'none'}.csv"`,
    )
    .send(lines.join(''));
}
