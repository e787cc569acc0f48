import type { MessageTable } from './table.js';

/** The online top-up page and its order states (docs/payments.md). */
export const paymentMessages = {
  'nav.topup': { 'zh-CN': '在线充值', en: 'Top up online' },
  'topup.title': { 'zh-CN': '在线充值', en: 'Top up online' },
  'topup.amount': { 'zh-CN': '金额（元）', en: 'Amount (yuan)' },
  'topup.submit': { 'zh-CN': '去支付', en: 'Pay' },
  'topup.methods': {
    'zh-CN': '支持银行卡、支付宝和微信支付（由 Stripe 处理）。',
    en: 'Card, Alipay and WeChat Pay (processed by Stripe).',
  },
  'topup.notConfigured': {
    'zh-CN': '本网关未开通在线支付，请使用兑换码充值。',
    en: 'Online payment is not set up on this gateway; redeem a code instead.',
  },
  'topup.orders': { 'zh-CN': '充值订单', en: 'Top-up orders' },
  'topup.none': { 'zh-CN': '还没有充值订单。', en: 'No top-up orders yet.' },
  'topup.time': { 'zh-CN': '创建时间', en: 'Created' },
  'topup.state': { 'zh-CN': '状态', en: 'State' },
  'topup.refunded': { 'zh-CN': '已退款', en: 'Refunded' },
  'topup.pay': { 'zh-CN': '继续支付', en: 'Continue to pay' },
  'topup.returnedPaid': {
    'zh-CN': '支付完成后到账可能需要几秒钟，订单状态会显示为“已到账”。',
    en: 'Payment done: crediting can take a few seconds; the order then shows “credited”.',
  },
  'topup.returnedCancelled': {
    'zh-CN': '支付已取消，没有扣款。',
    en: 'Payment cancelled; nothing was charged.',
  },
  'topup.state.created': { 'zh-CN': '待支付', en: 'Awaiting payment' },
  'topup.state.paid': { 'zh-CN': '已到账', en: 'Credited' },
  'topup.state.expired': { 'zh-CN': '已过期', en: 'Expired' },
  'topup.state.failed': { 'zh-CN': '支付失败', en: 'Failed' },
  'topup.state.amount_mismatch': {
    'zh-CN': '金额不符（未入账，待运营处理）',
    en: 'Amount mismatch (not credited; operators notified)',
  },
  'topup.state.balance_limit': {
    'zh-CN': '超出余额上限（未入账，待运营处理）',
    en: 'Over the balance limit (not credited; operators notified)',
  },
  'topup.state.refunded_partially': { 'zh-CN': '部分退款', en: 'Partly refunded' },
  'topup.state.refunded': { 'zh-CN': '已退款', en: 'Refunded' },
} satisfies MessageTable;
