/**
 * The online top-up page's messages (docs/payments.md), spread into i18n.tsx's two
 * dictionaries; `paymentEn` is typed by `paymentZhCN`'s keys, so a missing one fails the build.
 */
export const paymentZhCN = {
  'nav.topup': '在线充值',
  'topup.title': '在线充值',
  'topup.amount': '金额（元）',
  'topup.submit': '去支付',
  'topup.methods': '支持银行卡、支付宝和微信支付（由 Stripe 处理）。',
  'topup.badAmount': '请输入大于 0 的金额，最多两位小数。',
  'topup.notConfigured': '本网关未开通在线支付，请使用兑换码充值。',
  'topup.orders': '充值订单',
  'topup.none': '还没有充值订单。',
  'topup.time': '创建时间',
  'topup.state': '状态',
  'topup.refunded': '已退款',
  'topup.pay': '继续支付',
  'topup.returnedPaid': '支付完成后到账可能需要几秒钟，订单状态会显示为“已到账”。',
  'topup.returnedCancelled': '支付已取消，没有扣款。',
  'topup.state.created': '待支付',
  'topup.state.paid': '已到账',
  'topup.state.expired': '已过期',
  'topup.state.failed': '支付失败',
  'topup.state.amount_mismatch': '金额不符（未入账，待运营处理）',
  'topup.state.refunded_partially': '部分退款',
  'topup.state.refunded': '已退款',
};

export const paymentEn: Record<keyof typeof paymentZhCN, string> = {
  'nav.topup': 'Top up online',
  'topup.title': 'Top up online',
  'topup.amount': 'Amount (yuan)',
  'topup.submit': 'Pay',
  'topup.methods': 'Card, Alipay and WeChat Pay (processed by Stripe).',
  'topup.badAmount': 'Enter an amount above 0 with at most two decimals.',
  'topup.notConfigured': 'Online payment is not set up on this gateway; redeem a code instead.',
  'topup.orders': 'Top-up orders',
  'topup.none': 'No top-up orders yet.',
  'topup.time': 'Created',
  'topup.state': 'State',
  'topup.refunded': 'Refunded',
  'topup.pay': 'Continue to pay',
  'topup.returnedPaid':
    'Payment done: crediting can take a few seconds; the order then shows “credited”.',
  'topup.returnedCancelled': 'Payment cancelled; nothing was charged.',
  'topup.state.created': 'Awaiting payment',
  'topup.state.paid': 'Credited',
  'topup.state.expired': 'Expired',
  'topup.state.failed': 'Failed',
  'topup.state.amount_mismatch': 'Amount mismatch (not credited; operators notified)',
  'topup.state.refunded_partially': 'Partly refunded',
  'topup.state.refunded': 'Refunded',
};
