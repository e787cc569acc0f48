import { useI18n } from '../i18n.js';

/**
 * The operator pages' messages, in both languages. Kept apart from i18n.tsx (the caller's
 * pages) so the two sets of pages grow without editing one dictionary; the language is the
 * console's one. `en` is typed by `zhCN`'s keys: a missing message fails the build.
 */
const zhCN = {
  'op.nav': '运营',
  'op.accounts': '账户',
  'op.shares': '分享审核',
  'op.resolve': '待处理记录',
  'op.audit': '审计日志',
  'op.ledger': '账本检查',
  'op.invite': '邀请用户',
  'op.search': '搜索邮箱',
  'op.searchButton': '搜索',
  'op.email': '邮箱',
  'op.id': 'ID',
  'op.balance': '余额',
  'op.held': '冻结中',
  'op.available': '可用',
  'op.createAccount': '创建账户',
  'op.open': '查看',
  'op.topUp': '充值',
  'op.amountYuan': '金额（元）',
  'op.reference': '凭证号（同一凭证只入账一次）',
  'op.toppedUp': '已入账，当前余额：',
  'op.badAmount': '金额须为正数，最多 6 位小数。',
  'op.keys': '该账户的密钥',
  'op.disable': '停用',
  'op.disabled': '已停用',
  'op.active': '有效',
  'op.members': '成员',
  'op.none': '暂无。',
  'op.pendingShares': '待审核的分享',
  'op.preview': '预览',
  'op.approve': '通过',
  'op.reject': '拒绝',
  'op.reason': '理由',
  'op.reasonRequired': '理由（必填）',
  'op.records': 'submission_unknown 请求',
  'op.tasks': 'submission_unknown 任务',
  'op.action': '处理方式',
  'op.capture': '扣款（上游已执行）',
  'op.release': '释放冻结（未执行）',
  'op.amountMicro': '扣款金额（微元）',
  'op.submit': '提交',
  'op.resolved': '已处理。',
  'op.when': '时间',
  'op.who': '操作人',
  'op.what': '操作',
  'op.target': '对象',
  'op.account': '账户',
  'op.amount': '金额',
  'op.runCheck': '运行账本检查',
  'op.clean': '账本一致：没有发现问题。',
  'op.violations': '发现问题：',
  'op.role': '角色',
  'op.roleMember': '成员',
  'op.roleOperator': '运营',
  'op.accountId': '账户 ID（成员必填）',
  'op.inviteButton': '生成邀请链接',
  'op.inviteLink': '邀请链接（只显示一次，7 天内有效）：',
  'op.adminToken': '管理令牌',
  'op.held.amount': '冻结金额',
  'op.model': '模型',
  'op.kind': '类型',
  'op.more': '表格（可滚动）',
} as const;

type OperatorKey = keyof typeof zhCN;

const en: Record<OperatorKey, string> = {
  'op.nav': 'Operations',
  'op.accounts': 'Accounts',
  'op.shares': 'Share review',
  'op.resolve': 'To resolve',
  'op.audit': 'Audit log',
  'op.ledger': 'Ledger check',
  'op.invite': 'Invite',
  'op.search': 'Search email',
  'op.searchButton': 'Search',
  'op.email': 'Email',
  'op.id': 'ID',
  'op.balance': 'Balance',
  'op.held': 'Held',
  'op.available': 'Available',
  'op.createAccount': 'Create account',
  'op.open': 'Open',
  'op.topUp': 'Top up',
  'op.amountYuan': 'Amount (yuan)',
  'op.reference': 'Reference (credited once per reference)',
  'op.toppedUp': 'Credited; balance now ',
  'op.badAmount': 'The amount must be positive, with at most 6 decimals.',
  'op.keys': 'Keys of this account',
  'op.disable': 'Disable',
  'op.disabled': 'Disabled',
  'op.active': 'Active',
  'op.members': 'Members',
  'op.none': 'None.',
  'op.pendingShares': 'Shares awaiting review',
  'op.preview': 'Preview',
  'op.approve': 'Approve',
  'op.reject': 'Reject',
  'op.reason': 'Reason',
  'op.reasonRequired': 'Reason (required)',
  'op.records': 'submission_unknown requests',
  'op.tasks': 'submission_unknown tasks',
  'op.action': 'Resolution',
  'op.capture': 'Capture (the upstream did the work)',
  'op.release': 'Release the hold (it did not)',
  'op.amountMicro': 'Amount to capture (micro-yuan)',
  'op.submit': 'Submit',
  'op.resolved': 'Resolved.',
  'op.when': 'When',
  'op.who': 'Who',
  'op.what': 'Action',
  'op.target': 'Object',
  'op.account': 'Account',
  'op.amount': 'Amount',
  'op.runCheck': 'Run the ledger check',
  'op.clean': 'The ledger is consistent: no violation found.',
  'op.violations': 'Violations found: ',
  'op.role': 'Role',
  'op.roleMember': 'Member',
  'op.roleOperator': 'Operator',
  'op.accountId': 'Account ID (members only)',
  'op.inviteButton': 'Create invitation link',
  'op.inviteLink': 'Invitation link (shown once, valid 7 days): ',
  'op.adminToken': 'admin token',
  'op.held.amount': 'Held',
  'op.model': 'Model',
  'op.kind': 'Kind',
  'op.more': 'Table (scrollable)',
};

/** `t` for the operator pages, in the console's current language. */
export function useOperatorText(): (key: OperatorKey) => string {
  const { language } = useI18n();
  return (key) => (language === 'en' ? en[key] : zhCN[key]);
}

/**
 * Yuan typed by an operator as exact micro-yuan, by string arithmetic (no floating point):
 * `12.5` → 12 500 000. `null` for anything but a positive amount with at most 6 decimals.
 */
export function parseYuan(text: string): number | null {
  const match = /^(\d{1,7})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (match === null) return null;
  const micro = Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
  return micro > 0 ? micro : null;
}
