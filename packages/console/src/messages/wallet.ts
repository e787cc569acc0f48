import type { MessageTable } from './table.js';

/**
 * The member's wallet, `/console/billing` (docs/console.md, "Wallet"): the balance, what is held
 * and why, every movement with the balance after it, the statement as CSV; and the links between
 * it, the top-up page and the redeem page. Every value the page shows of the wire (movement
 * kinds, hold kinds, record states, what releases a hold) is one message here; a task's status
 * and billing state are `state.*` (caller.ts).
 */
export const walletMessages = {
  'nav.billing': { 'zh-CN': '钱包与账单', en: 'Wallet' },
  'wallet.title': { 'zh-CN': '钱包与账单', en: 'Wallet and statement' },
  'wallet.topUp': { 'zh-CN': '在线充值', en: 'Top up online' },
  'wallet.redeem': { 'zh-CN': '使用兑换码', en: 'Redeem a code' },
  'wallet.toWallet': { 'zh-CN': '查看钱包与账单', en: 'See the wallet and statement' },
  'wallet.orRedeem': {
    'zh-CN': '有兑换码？在兑换码页面充值。',
    en: 'Have a redemption code? Redeem it instead.',
  },
  'wallet.orTopUp': {
    'zh-CN': '没有兑换码？在线充值。',
    en: 'No code? Top up online instead.',
  },
  'wallet.balance': { 'zh-CN': '余额', en: 'Balance' },
  'wallet.held': { 'zh-CN': '冻结中', en: 'Held' },
  'wallet.available': { 'zh-CN': '可用', en: 'Available' },
  'wallet.owed': { 'zh-CN': '待扣回的退款', en: 'Refund owed' },
  'wallet.owedNote': {
    'zh-CN': '有退款未能当时扣回：之后释放或到账的金额会先用于扣回。',
    en: 'A refund could not be taken back when it came: money freed or credited next pays it first.',
  },

  'wallet.holds': { 'zh-CN': '冻结明细', en: 'What is held' },
  'wallet.holdsNote': {
    'zh-CN': '请求或任务开始前会先冻结最多可能花费的金额；结束后按实际用量扣费，其余释放。',
    en: 'A request or task first holds the most it may cost; when it ends, what it used is charged and the rest released.',
  },
  'wallet.noHolds': { 'zh-CN': '目前没有冻结的金额。', en: 'Nothing is held now.' },
  'wallet.holdsTruncated': {
    'zh-CN': '只列出最早的 200 笔冻结；冻结总额包含全部。',
    en: 'Only the 200 oldest holds are listed; the held total counts them all.',
  },
  'wallet.since': { 'zh-CN': '冻结时间', en: 'Held since' },
  'wallet.heldBy': { 'zh-CN': '冻结者', en: 'Held by' },
  'wallet.model': { 'zh-CN': '模型', en: 'Model' },
  'wallet.key': { 'zh-CN': '密钥', en: 'Key' },
  'wallet.unnamedKey': { 'zh-CN': '未命名', en: 'unnamed' },
  'wallet.state': { 'zh-CN': '状态', en: 'State' },
  'wallet.amount': { 'zh-CN': '金额', en: 'Amount' },
  'wallet.releasedBy': { 'zh-CN': '何时释放或扣费', en: 'What ends it' },
  'wallet.holdKind.request': { 'zh-CN': '请求', en: 'Request' },
  'wallet.holdKind.task': { 'zh-CN': '任务', en: 'Task' },
  'wallet.release.request_finishes': {
    'zh-CN': '请求结束时按实际用量扣费，其余释放；失败则全部释放。',
    en: 'When the request ends: what it used is charged, the rest released (all of it if it fails).',
  },
  'wallet.release.request_settled': {
    'zh-CN': '结果费用超过了当时的可用余额：充值后在任务页结算即扣费。',
    en: 'Its result cost more than was available: settle it on the Tasks page after a top-up to charge it.',
  },
  'wallet.release.request_reconciled': {
    'zh-CN': '结果未确认：网关向上游查询或运营人员处理后扣费或释放。',
    en: 'Its outcome is unconfirmed: charged or released once the gateway asks the upstream, or an operator resolves it.',
  },
  'wallet.release.task_finishes': {
    'zh-CN': '任务结束后计价并等待结算；失败则释放。',
    en: 'When the task ends it is priced and awaits settlement; released if it fails.',
  },
  'wallet.release.task_settled': {
    'zh-CN': '结算后扣费；未结算则在以下时间释放：',
    en: 'Charged when you settle it; released unsettled at',
  },
  'wallet.release.task_reconciled': {
    'zh-CN': '提交结果未确认：运营人员处理后释放。',
    en: 'Its submission is unconfirmed: released once an operator resolves it.',
  },
  'wallet.requestStatus.processing': { 'zh-CN': '处理中', en: 'Processing' },
  'wallet.requestStatus.succeeded': { 'zh-CN': '成功', en: 'Succeeded' },
  'wallet.requestStatus.failed': { 'zh-CN': '失败', en: 'Failed' },
  'wallet.requestStatus.submission_unknown': {
    'zh-CN': '结果未确认',
    en: 'Outcome unconfirmed',
  },
  'wallet.requestStatus.awaiting_funds': { 'zh-CN': '待补足余额', en: 'Awaiting funds' },
  'wallet.requestStatus.resolved': { 'zh-CN': '已由运营处理', en: 'Resolved by an operator' },
  'wallet.requestStatus.accepted': { 'zh-CN': '已创建任务', en: 'Task created' },

  'wallet.movements': { 'zh-CN': '资金流水', en: 'Movements' },
  'wallet.movementsNote': {
    'zh-CN':
      '按记账顺序列出每一笔：充值、兑换、冻结、扣费、释放、退款，以及每笔之后的余额。日期为 UTC 日。',
    en: 'Every entry in journal order: top-ups, redemptions, holds, charges, releases, refunds, with the balance after each. Days are UTC days.',
  },
  'wallet.from': { 'zh-CN': '起始日（UTC）', en: 'From (UTC day)' },
  'wallet.to': { 'zh-CN': '结束日（UTC）', en: 'To (UTC day)' },
  'wallet.show': { 'zh-CN': '查看', en: 'Show' },
  'wallet.csv': { 'zh-CN': '下载 CSV 账单', en: 'Download the statement (CSV)' },
  'wallet.period': { 'zh-CN': '期间', en: 'Period' },
  'wallet.incomplete': {
    'zh-CN': '期间尚未结束，之后可能还有新的流水。',
    en: 'The period has not ended: more entries may still come.',
  },
  'wallet.opening': { 'zh-CN': '期初余额', en: 'Opening balance' },
  'wallet.openingHeld': { 'zh-CN': '期初冻结', en: 'Held at the start' },
  'wallet.none': { 'zh-CN': '这段期间没有流水。', en: 'No movement in this period.' },
  'wallet.more': { 'zh-CN': '加载更多', en: 'Load more' },
  'wallet.time': { 'zh-CN': '时间', en: 'Time' },
  'wallet.kind': { 'zh-CN': '类型', en: 'Kind' },
  'wallet.heldChange': { 'zh-CN': '冻结变动', en: 'Held change' },
  'wallet.balanceAfter': { 'zh-CN': '之后余额', en: 'Balance after' },
  'wallet.of': { 'zh-CN': '关联', en: 'For' },
  'wallet.kind.topup': { 'zh-CN': '充值', en: 'Top-up' },
  'wallet.kind.redemption': { 'zh-CN': '兑换码', en: 'Redemption' },
  'wallet.kind.hold': { 'zh-CN': '冻结', en: 'Hold' },
  'wallet.kind.capture': { 'zh-CN': '扣费', en: 'Charge' },
  'wallet.kind.release': { 'zh-CN': '释放', en: 'Release' },
  'wallet.kind.refund': { 'zh-CN': '退款', en: 'Refund' },
} satisfies MessageTable;
