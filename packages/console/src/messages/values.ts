import type { ErrorCode } from '@tollgate/protocol';
import type { ClientFailureCode } from '../api.js';
import type { MessageTable } from './table.js';

/**
 * Values of the wire the console shows in words (issue 36, item 3: one language at a time): a
 * record's status, a task's kind, an audit action, a bill's line items and pricing rule, a key
 * named by what a person knows, and every error code the gateway (packages/protocol/src/errors.ts)
 * or the console itself (api.ts) may give. The wire value stays in a `data-` attribute or a
 * disclosure, never as the visible text.
 */
export const valueMessages = {
  // A request record's status (protocol RequestStatus).
  'record.status.processing': { 'zh-CN': '处理中', en: 'Processing' },
  'record.status.succeeded': { 'zh-CN': '成功', en: 'Succeeded' },
  'record.status.failed': { 'zh-CN': '失败', en: 'Failed' },
  'record.status.accepted': { 'zh-CN': '已创建任务', en: 'Task created' },
  'record.status.awaiting_funds': { 'zh-CN': '待补足余额', en: 'Awaiting funds' },
  'record.status.submission_unknown': { 'zh-CN': '提交结果未知', en: 'Submission unknown' },
  'record.status.resolved': { 'zh-CN': '已由运营处理', en: 'Resolved by an operator' },

  // A task's kind (protocol TaskKind; the object `image.task`, `video.task`, `h3.task`).
  'task.kind.image': { 'zh-CN': '图片', en: 'Image' },
  'task.kind.video': { 'zh-CN': '视频', en: 'Video' },
  'task.kind.h3': { 'zh-CN': 'H3 视频', en: 'H3 video' },

  // The audit log's actions (docs/audit.md).
  'audit.action.account.create': { 'zh-CN': '创建账户', en: 'Account created' },
  'audit.action.account.top_up': { 'zh-CN': '账户充值', en: 'Account topped up' },
  'audit.action.account.redeem': { 'zh-CN': '兑换码入账', en: 'Code redeemed' },
  'audit.action.account.set_budget': { 'zh-CN': '设置账户预算', en: 'Account budget set' },
  'audit.action.account.remove_budget': {
    'zh-CN': '移除账户预算',
    en: 'Account budget removed',
  },
  'audit.action.redemption_code.create': { 'zh-CN': '生成兑换码', en: 'Redemption code created' },
  'audit.action.redemption_code.create_batch': {
    'zh-CN': '批量生成兑换码',
    en: 'Redemption codes created',
  },
  'audit.action.redemption_code.void_batch': {
    'zh-CN': '作废兑换码批次',
    en: 'Code batch voided',
  },
  'audit.action.key.create': { 'zh-CN': '创建密钥', en: 'Key created' },
  'audit.action.key.disable': { 'zh-CN': '停用密钥', en: 'Key disabled' },
  'audit.action.key.rotate': { 'zh-CN': '轮换密钥', en: 'Key rotated' },
  'audit.action.key.set_budget': { 'zh-CN': '设置密钥预算', en: 'Key budget set' },
  'audit.action.key.remove_budget': { 'zh-CN': '移除密钥预算', en: 'Key budget removed' },
  'audit.action.key.set_allowed_ips': {
    'zh-CN': '设置密钥来源 IP',
    en: 'Key source IPs set',
  },
  'audit.action.prices.set': { 'zh-CN': '修改价格', en: 'Prices set' },
  'audit.action.channel.disable': { 'zh-CN': '停用渠道', en: 'Channel disabled' },
  'audit.action.channel.enable': { 'zh-CN': '启用渠道', en: 'Channel enabled' },
  'audit.action.request.resolve_capture': {
    'zh-CN': '处理请求：扣款',
    en: 'Request resolved: captured',
  },
  'audit.action.request.resolve_release': {
    'zh-CN': '处理请求：释放冻结',
    en: 'Request resolved: released',
  },
  'audit.action.request.review_usage': {
    'zh-CN': '审核超上限用量',
    en: 'Usage beyond the cap reviewed',
  },
  'audit.action.task.resolve_release': {
    'zh-CN': '处理任务：释放冻结',
    en: 'Task resolved: released',
  },
  'audit.action.task.resolve_attach': {
    'zh-CN': '处理任务：关联上游任务',
    en: 'Task resolved: attached',
  },
  'audit.action.share.approve': { 'zh-CN': '通过分享', en: 'Share approved' },
  'audit.action.share.reject': { 'zh-CN': '拒绝分享', en: 'Share rejected' },
  'audit.action.share.revoke': { 'zh-CN': '撤销分享', en: 'Share revoked' },
  'audit.action.console_user.invite': { 'zh-CN': '邀请控制台用户', en: 'User invited' },
  'audit.action.console_user.disable': { 'zh-CN': '停用控制台用户', en: 'User disabled' },
  'audit.action.console_user.enable': { 'zh-CN': '启用控制台用户', en: 'User enabled' },
  'audit.action.payment.credit': { 'zh-CN': '在线充值入账', en: 'Payment credited' },
  'audit.action.payment.refund': { 'zh-CN': '在线充值退款', en: 'Payment refunded' },
  'audit.action.payment.flagged': { 'zh-CN': '支付需处理', en: 'Payment flagged' },
  'audit.action.other': { 'zh-CN': '其他操作', en: 'Other action' },

  // A bill's line items: a request's (protocol BillLineItem) and a task's (LineItem).
  'lineItem.input': { 'zh-CN': '输入 tokens', en: 'Input tokens' },
  'lineItem.cache_read': { 'zh-CN': '缓存读取 tokens', en: 'Cache read tokens' },
  'lineItem.cache_write': {
    'zh-CN': '缓存写入 tokens（5 分钟）',
    en: 'Cache write tokens (5 min)',
  },
  'lineItem.cache_write_1h': {
    'zh-CN': '缓存写入 tokens（1 小时）',
    en: 'Cache write tokens (1 hour)',
  },
  'lineItem.output': { 'zh-CN': '输出 tokens', en: 'Output tokens' },
  'lineItem.reasoning': { 'zh-CN': '推理 tokens', en: 'Reasoning tokens' },
  'lineItem.request': { 'zh-CN': '每次请求费用', en: 'Per-request fee' },
  'lineItem.image': { 'zh-CN': '图片', en: 'Images' },
  'lineItem.video_second': { 'zh-CN': '视频秒数', en: 'Video seconds' },
  'lineItem.reference_image': { 'zh-CN': '参考图片', en: 'Reference images' },
  'lineItem.input_token': { 'zh-CN': '输入 tokens', en: 'Input tokens' },
  'lineItem.output_token': { 'zh-CN': '输出 tokens', en: 'Output tokens' },
  'lineItem.other': { 'zh-CN': '其他', en: 'Other' },
  'lineItem.withAudio': { 'zh-CN': '含音频', en: 'with audio' },
  'lineItem.firstFree': { 'zh-CN': '前 {n} 张免费', en: 'first {n} free' },
  'lineItem.noneFree': { 'zh-CN': '无免费额度', en: 'none free' },

  // A pricing rule, by its kind (pricing-rule.ts); the gateway's own sentence is behind a disclosure.
  'rule.tokens': {
    'zh-CN': '按 tokens 计价：每项用量 × 每百万 tokens 单价，向上取整到微元（见计费明细）。',
    en: 'Priced by tokens: each item’s tokens × its price per million tokens, rounded up to a micro-yuan (see the line items).',
  },
  'rule.inputTokens': {
    'zh-CN': '按输入 tokens 计价：tokens × 每百万 tokens 单价，向上取整到微元。',
    en: 'Priced by input tokens: tokens × the price per million tokens, rounded up to a micro-yuan.',
  },
  'rule.items': {
    'zh-CN': '按计费明细计价：各项数量 × 单价之和。',
    en: 'Priced by its line items: each quantity × its unit price, added up.',
  },
  'rule.nothingBilled': { 'zh-CN': '未计费：没有可计费的产出。', en: 'Nothing billed.' },
  'rule.settlement': {
    'zh-CN': '结算：从冻结金额中扣除实际金额。',
    en: 'Settled: the actual amount was charged on its hold.',
  },
  'rule.operator': {
    'zh-CN': '由运营人员处理。',
    en: 'Resolved by an operator.',
  },
  'rule.free': { 'zh-CN': '免费。', en: 'Free.' },
  'rule.notCharged': {
    'zh-CN': '未收费：冻结金额已释放。',
    en: 'Not charged: the hold was released.',
  },
  'rule.insurance': {
    'zh-CN': '无输出保障：没有产生输出，不收费。',
    en: 'Zero-completion insurance: no output, not charged.',
  },
  'rule.unknownOutcome': {
    'zh-CN': '结果未确认：冻结金额保留，等待核对或运营人员处理。',
    en: 'Outcome unconfirmed: the hold is kept until it is reconciled or an operator resolves it.',
  },
  'rule.expired': {
    'zh-CN': '未在结算期限内结算：不收费，冻结已释放，结果已删除。',
    en: 'Not settled in its window: nothing charged, the hold released, the outputs deleted.',
  },
  'rule.capped': {
    'zh-CN': '（用量超过上限，按上限计费）',
    en: '(usage beyond the cap: billed at the cap)',
  },
  'rule.other': {
    'zh-CN': '计价方式见网关的计算过程。',
    en: 'See the gateway’s computation.',
  },
  'rule.computation': { 'zh-CN': '网关的计算过程（英文）', en: 'The gateway’s computation' },

  // A key as a person knows it (components/KeyLabel.tsx).
  'key.unnamed': { 'zh-CN': '未命名', en: 'unnamed' },
  'key.console': { 'zh-CN': '控制台', en: 'the console' },
  'key.purged': { 'zh-CN': '记录已清理', en: 'record purged' },
  'key.spendChart': {
    'zh-CN': '近 30 天各密钥消费（元）；数据见下表',
    en: 'Spend per key, last 30 days (yuan); the table below has the figures',
  },
  'key.spendTitle': { 'zh-CN': '近 30 天各密钥消费', en: 'Spend per key, last 30 days' },

  // A record's usage counts (RequestsPage).
  'usage.prompt_tokens': { 'zh-CN': '输入 tokens', en: 'Input tokens' },
  'usage.completion_tokens': { 'zh-CN': '输出 tokens', en: 'Output tokens' },
  'usage.total_tokens': { 'zh-CN': '合计 tokens', en: 'Total tokens' },
  'usage.cached_tokens': { 'zh-CN': '缓存读取 tokens', en: 'Cached tokens' },
  'usage.reasoning_tokens': { 'zh-CN': '推理 tokens', en: 'Reasoning tokens' },
  'usage.cache_write_tokens': { 'zh-CN': '缓存写入 tokens', en: 'Cache write tokens' },
  'usage.cache_write_1h_tokens': {
    'zh-CN': '缓存写入 tokens（1 小时）',
    en: 'Cache write tokens (1 hour)',
  },

  // The operator's pickers (operator/AccountPicker.tsx) and the names on operator pages.
  'op.pick.find': { 'zh-CN': '查找账户（邮箱）', en: 'Find an account (email)' },
  'op.pick.choose': { 'zh-CN': '请选择账户', en: 'Choose an account' },
  'op.pick.account': { 'zh-CN': '账户', en: 'Account' },
  'op.inviteAccount': { 'zh-CN': '成员所属账户', en: 'The member’s account' },
  'op.key': { 'zh-CN': '密钥', en: 'Key' },
  'op.keyName': { 'zh-CN': '名称', en: 'Name' },
  'op.keyHint': { 'zh-CN': '密钥', en: 'Key' },
  'op.lastUsed': { 'zh-CN': '最近使用', en: 'Last used' },
  'op.shareTask': { 'zh-CN': '任务', en: 'Task' },
  'op.shareFile': { 'zh-CN': '文件', en: 'File' },
  'op.flagged': { 'zh-CN': '需处理', en: 'Flagged' },
  'op.flagText': { 'zh-CN': '原因（英文原文）', en: 'Why' },
  'journal.text': { 'zh-CN': '账本说明（英文原文）', en: 'Journal entry' },
  'op.upstreamReport': { 'zh-CN': '上游报告（英文原文）', en: 'What the upstream reported' },
  'op.violationsDetail': { 'zh-CN': '问题明细（英文原文）', en: 'The violations' },

  // Failures (pages/ErrorLine.tsx): a message per code; the gateway's English detail is disclosed.
  'error.detail': { 'zh-CN': '详情（英文原文）', en: 'Details' },
  'error.param': { 'zh-CN': '字段', en: 'field' },
  'error.INVALID_INPUT': { 'zh-CN': '输入有误。', en: 'The input is not valid.' },
  'error.INVALID_CHAT_SETTINGS': {
    'zh-CN': '对话参数有误。',
    en: 'The chat settings are not valid.',
  },
  'error.INVALID_FUNCTION_TOOLS': {
    'zh-CN': '工具定义有误。',
    en: 'The function tools are not valid.',
  },
  'error.UNSUPPORTED_CAPABILITY': {
    'zh-CN': '该模型不支持这项功能。',
    en: 'The model does not support this.',
  },
  'error.UNAUTHENTICATED': {
    'zh-CN': '未登录或登录已失效。',
    en: 'Not signed in, or the session has ended.',
  },
  'error.API_KEY_INVALID': { 'zh-CN': 'API 密钥无效。', en: 'The API key is not valid.' },
  'error.INVALID_API_KEY': { 'zh-CN': 'API 密钥无效。', en: 'The API key is not valid.' },
  'error.INSUFFICIENT_FUNDS': { 'zh-CN': '可用余额不足。', en: 'Not enough balance available.' },
  'error.PERMISSION_DENIED': { 'zh-CN': '没有权限这样做。', en: 'This is not allowed.' },
  'error.NATIVE_MODE_UNVERIFIED': {
    'zh-CN': '该模型的原生模式尚未验证。',
    en: 'Native mode is not verified for this model.',
  },
  'error.NOT_FOUND': {
    'zh-CN': '找不到：它不存在、已被使用或已过期。',
    en: 'Not found: it does not exist, was used, or has expired.',
  },
  'error.MODEL_NOT_FOUND': { 'zh-CN': '找不到该模型。', en: 'No such model.' },
  'error.TASK_NOT_FOUND': { 'zh-CN': '找不到该任务。', en: 'No such task.' },
  'error.CONVERSATION_PENDING': {
    'zh-CN': '该会话还有请求未完成。',
    en: 'The conversation has a request in progress.',
  },
  'error.CONVERSATION_KEY_MISMATCH': {
    'zh-CN': '该会话属于另一个密钥。',
    en: 'The conversation belongs to another key.',
  },
  'error.IDEMPOTENCY_CONFLICT': {
    'zh-CN': '与已有的内容冲突。',
    en: 'It conflicts with what already exists.',
  },
  'error.IDEMPOTENCY_IN_PROGRESS': {
    'zh-CN': '相同的操作正在进行中，请稍后再看。',
    en: 'The same action is in progress; look again shortly.',
  },
  'error.PRICE_CHANGED': { 'zh-CN': '价格已变更。', en: 'The price has changed.' },
  'error.SETTLEMENT_NOT_ALLOWED': {
    'zh-CN': '现在不能结算。',
    en: 'It cannot be settled now.',
  },
  'error.SETTLEMENT_EXPIRED': {
    'zh-CN': '已过结算期限。',
    en: 'The settlement window has passed.',
  },
  'error.ASSET_IN_USE': {
    'zh-CN': '文件仍被请求或任务使用，暂时不能删除。',
    en: 'A request or task still uses the file.',
  },
  'error.KEY_NOT_ROTATABLE': {
    'zh-CN': '此密钥不能轮换（已停用、已过期或已轮换过）。',
    en: 'This key cannot be rotated (disabled, expired or already rotated).',
  },
  'error.USAGE_REVIEW_NOT_ALLOWED': {
    'zh-CN': '此记录不能审核（可能已审核过）。',
    en: 'This record cannot be reviewed (it may already be).',
  },
  'error.SETTLEMENT_MISMATCH': {
    'zh-CN': '结算内容与任务不一致。',
    en: 'The settlement does not match the task.',
  },
  'error.CONTENT_NOT_DELIVERED': {
    'zh-CN': '内容尚未交付。',
    en: 'The content is not delivered.',
  },
  'error.SHARE_DECISION_NOT_ALLOWED': {
    'zh-CN': '此分享现在不能审核。',
    en: 'This share cannot be decided now.',
  },
  'error.INPUT_DIGEST_MISMATCH': {
    'zh-CN': '输入与之前的不一致。',
    en: 'The input differs from before.',
  },
  'error.QUOTE_MISMATCH': { 'zh-CN': '报价不一致。', en: 'The quote does not match.' },
  'error.REQUEST_TIMEOUT': { 'zh-CN': '请求超时。', en: 'The request timed out.' },
  'error.BODY_TOO_LARGE': { 'zh-CN': '内容太大。', en: 'It is too large.' },
  'error.UNSUPPORTED_MEDIA_TYPE': {
    'zh-CN': '不支持这种文件类型。',
    en: 'This type of file is not supported.',
  },
  'error.RANGE_NOT_SATISFIABLE': {
    'zh-CN': '请求的范围无效。',
    en: 'The range asked for is not valid.',
  },
  'error.RATE_LIMITED': {
    'zh-CN': '操作太频繁，请稍后再试。',
    en: 'Too many attempts; try again later.',
  },
  'error.HEADERS_TOO_LARGE': { 'zh-CN': '请求头太大。', en: 'The headers are too large.' },
  'error.INTERNAL_ERROR': { 'zh-CN': '网关内部出错。', en: 'The gateway failed.' },
  'error.UPSTREAM_ERROR': { 'zh-CN': '上游服务出错。', en: 'The upstream failed.' },
  'error.MODEL_UNAVAILABLE': {
    'zh-CN': '该模型暂时不可用。',
    en: 'The model is unavailable for now.',
  },
  'error.SERVICE_UNAVAILABLE': {
    'zh-CN': '服务暂时不可用。',
    en: 'The service is unavailable for now.',
  },
  'error.UPSTREAM_TIMEOUT': { 'zh-CN': '上游服务超时。', en: 'The upstream timed out.' },
  'error.NETWORK': { 'zh-CN': '无法连接到网关。', en: 'The gateway could not be reached.' },
  'error.UNEXPECTED_ANSWER': {
    'zh-CN': '无法读取网关的应答：网关或其前面的代理可能暂时不可用。',
    en: "The gateway's answer could not be read: the gateway or a proxy in front of it may be unavailable.",
  },
  'error.UNKNOWN': {
    'zh-CN': '网关返回了控制台不认识的错误。',
    en: 'The gateway answered an error the console does not know.',
  },
  'error.other': { 'zh-CN': '出现了错误。', en: 'It failed.' },
} satisfies MessageTable;

// Fails to type-check when an error code (the gateway's or the console's) has no message.
const everyCode: Record<`error.${ErrorCode | ClientFailureCode}`, unknown> = valueMessages;
void everyCode;
