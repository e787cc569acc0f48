/**
 * The messages of the pages for usage beyond the cap and statements (UsageCapPage.tsx,
 * StatementsPage.tsx), spread into operator-i18n.ts's two dictionaries; `reviewEn` is typed by
 * `reviewZhCN`'s keys, so a missing one fails the build.
 */
export const reviewZhCN = {
  'op.usageCap': '超上限用量',
  'op.usageCapNote':
    '上游报告的用量超过了请求的上限（如 max_tokens）。计费已按上限封顶；请核实原因后填写说明，标记为已审核（不会改动任何金额）。',
  'op.request': '请求',
  'op.detail': '详情',
  'op.billed': '计费',
  'op.markReviewed': '标记为已审核',
  'op.reviewReason': '审核说明（必填）',
  'op.statements': '对账单',
  'op.statementNote':
    '账户在一段时间内的每笔余额变动（充值、兑换、扣费），按 UTC 日期计算；可下载 JSON 或 CSV。',
  'op.statementAccount': '账户 ID',
  'op.movementOf': '凭证 / 请求 / 任务',
  'op.fromDay': '起始日期（UTC，可空：本月第一天）',
  'op.toDay': '截止日期（UTC，可空：今天）',
  'op.show': '查看',
  'op.downloadJson': '下载 JSON',
  'op.downloadCsv': '下载 CSV',
  'op.opening': '期初余额',
  'op.closing': '期末余额',
  'op.credits': '入账合计',
  'op.debits': '扣费合计',
  'op.description': '说明',
  'op.incomplete': '期间尚未结束：之后仍可能有新的变动。',
  'op.statementOf': '对账单',
} as const;

export const reviewEn: Record<keyof typeof reviewZhCN, string> = {
  'op.usageCap': 'Usage beyond the cap',
  'op.usageCapNote':
    'The upstream reported more usage than the request allowed (max_tokens and the like). The bill was held to the cap; find out why, then mark it reviewed with a note (no amount changes).',
  'op.request': 'Request',
  'op.detail': 'Detail',
  'op.billed': 'Billed',
  'op.markReviewed': 'Mark reviewed',
  'op.reviewReason': 'Review note (required)',
  'op.statements': 'Statements',
  'op.statementNote':
    'Every balance movement of an account over a period (top-ups, redemptions, charges), in UTC days; download as JSON or CSV.',
  'op.statementAccount': 'Account ID',
  'op.movementOf': 'Reference / request / task',
  'op.fromDay': 'From (UTC day; empty: first of the month)',
  'op.toDay': 'To (UTC day; empty: today)',
  'op.show': 'Show',
  'op.downloadJson': 'Download JSON',
  'op.downloadCsv': 'Download CSV',
  'op.opening': 'Opening balance',
  'op.closing': 'Closing balance',
  'op.credits': 'Credits',
  'op.debits': 'Debits',
  'op.description': 'Description',
  'op.incomplete': 'The period has not ended: more movements may still come.',
  'op.statementOf': 'Statement',
};
