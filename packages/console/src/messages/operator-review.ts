import type { MessageTable } from './table.js';

/** The operator pages for usage beyond the cap and statements (UsageCapPage, StatementsPage). */
export const operatorReviewMessages = {
  'op.usageCap': { 'zh-CN': '超上限用量', en: 'Usage beyond the cap' },
  'op.usageCapNote': {
    'zh-CN':
      '上游报告的用量超过了请求的上限（如 max_tokens）。计费已按上限封顶；请核实原因后填写说明，标记为已审核（不会改动任何金额）。',
    en: 'The upstream reported more usage than the request allowed (max_tokens and the like). The bill was held to the cap; find out why, then mark it reviewed with a note (no amount changes).',
  },
  'op.request': { 'zh-CN': '请求', en: 'Request' },
  'op.detail': { 'zh-CN': '详情', en: 'Detail' },
  'op.billed': { 'zh-CN': '计费', en: 'Billed' },
  'op.markReviewed': { 'zh-CN': '标记为已审核', en: 'Mark reviewed' },
  'op.reviewReason': { 'zh-CN': '审核说明（必填）', en: 'Review note (required)' },
  'op.statements': { 'zh-CN': '对账单', en: 'Statements' },
  'op.statementNote': {
    'zh-CN':
      '账户在一段时间内的每笔余额变动（充值、兑换、扣费），按 UTC 日期计算；可下载 JSON 或 CSV。',
    en: 'Every balance movement of an account over a period (top-ups, redemptions, charges), in UTC days; download as JSON or CSV.',
  },
  'op.statementAccount': { 'zh-CN': '账户 ID', en: 'Account ID' },
  'op.movementOf': { 'zh-CN': '凭证 / 请求 / 任务', en: 'Reference / request / task' },
  'op.fromDay': {
    'zh-CN': '起始日期（UTC，可空：本月第一天）',
    en: 'From (UTC day; empty: first of the month)',
  },
  'op.toDay': { 'zh-CN': '截止日期（UTC，可空：今天）', en: 'To (UTC day; empty: today)' },
  'op.show': { 'zh-CN': '查看', en: 'Show' },
  'op.downloadJson': { 'zh-CN': '下载 JSON', en: 'Download JSON' },
  'op.downloadCsv': { 'zh-CN': '下载 CSV', en: 'Download CSV' },
  'op.opening': { 'zh-CN': '期初余额', en: 'Opening balance' },
  'op.closing': { 'zh-CN': '期末余额', en: 'Closing balance' },
  'op.credits': { 'zh-CN': '入账合计', en: 'Credits' },
  'op.debits': { 'zh-CN': '扣费合计', en: 'Debits' },
  'op.description': { 'zh-CN': '说明', en: 'Description' },
  'op.incomplete': {
    'zh-CN': '期间尚未结束：之后仍可能有新的变动。',
    en: 'The period has not ended: more movements may still come.',
  },
  'op.statementOf': { 'zh-CN': '对账单', en: 'Statement' },
} satisfies MessageTable;
