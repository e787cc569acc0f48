import { createContext, useContext, useMemo, useState, type ReactNode } from 'react';
import { assetEn, assetZhCN } from './asset-messages.js';
import { callerEn, callerZhCN } from './caller-messages.js';
import { securityEn, securityZhCN } from './security-messages.js';
import { paymentEn, paymentZhCN } from './payment-messages.js';

/**
 * The console's two languages (docs/decisions/0011-console.md: a dictionary module, no i18n
 * library). Every message exists in both, or the build fails: `en` is typed by `zhCN`'s keys.
 */
const zhCN = {
  'app.title': 'Tollgate 控制台',
  'nav.overview': '概览',
  'nav.keys': 'API 密钥',
  'nav.redeem': '兑换码',
  'nav.requests': '请求记录',
  'nav.signOut': '退出登录',
  'nav.language': '语言',
  'common.loading': '加载中…',
  'common.error': '出错了：',
  'common.microYuan': '微元',
  'signIn.title': '登录',
  'signIn.email': '邮箱',
  'signIn.password': '密码',
  'signIn.submit': '登录',
  'signIn.wrong': '邮箱或密码错误。',
  'signIn.throttled': '失败次数过多，请稍后再试。',
  'signIn.totp': '验证器应用中的 6 位验证码',
  'signIn.totpWrong': '验证码错误或已使用，请输入新的验证码。',
  'invite.title': '设置密码',
  'invite.for': '为以下账号设置控制台密码：',
  'invite.password': '新密码（至少 10 个字符）',
  'invite.confirm': '再次输入新密码',
  'invite.mismatch': '两次输入的密码不一致。',
  'invite.submit': '设置密码并登录',
  'invite.unusable': '此邀请链接无效、已使用或已过期，请联系运营人员获取新链接。',
  'overview.title': '账户概览',
  'overview.balance': '余额',
  'overview.held': '冻结中',
  'overview.available': '可用',
  'overview.owed': '待扣回退款',
  'overview.owedNote': '已退款但当时无法扣回的金额：之后释放的冻结金额或充值会先抵扣这部分。',
  'overview.account': '账户',
  'overview.budget': '预算剩余',
  'overview.budgetSpent': '已用',
  'overview.budgetResets': '重置于',
  'overview.window.daily': '每日',
  'overview.window.weekly': '每周',
  'overview.window.monthly': '每月',
  'overview.window.total': '总计',
  'keys.title': 'API 密钥',
  'keys.create': '创建密钥',
  'keys.name': '名称',
  'keys.kind': '类型',
  'keys.kind.personal': '个人',
  'keys.kind.service': '服务',
  'keys.hint': '密钥',
  'keys.created': '创建时间',
  'keys.lastUsed': '最近使用',
  'keys.state': '状态',
  'keys.active': '有效',
  'keys.disabled': '已停用',
  'keys.disable': '停用',
  'keys.confirmDisable': '确定停用此密钥？使用它的请求将立即被拒绝。',
  'keys.newKey': '新密钥',
  'keys.shownOnce': '此密钥只显示这一次。请立即复制并妥善保存；关闭或刷新页面后将无法再次查看。',
  'keys.copy': '复制',
  'keys.copied': '已复制',
  'keys.dismiss': '我已保存',
  'keys.none': '还没有密钥。',
  'keys.never': '从未',
  'redeem.title': '兑换码充值',
  'redeem.code': '兑换码',
  'redeem.submit': '兑换',
  'redeem.done': '兑换成功，当前余额：',
  'redeem.unusable': '兑换码不存在、已使用或已过期。',
  'requests.title': '请求记录',
  'requests.time': '时间',
  'requests.id': '请求 ID',
  'requests.model': '模型',
  'requests.status': '状态',
  'requests.amount': '金额',
  'requests.key': '密钥',
  'requests.none': '还没有请求记录。',
  'requests.more': '加载更多',
  ...callerZhCN,
  ...assetZhCN,
  ...securityZhCN,
  ...paymentZhCN,
} as const;

export type MessageKey = keyof typeof zhCN;

const en: Record<MessageKey, string> = {
  'app.title': 'Tollgate console',
  'nav.overview': 'Overview',
  'nav.keys': 'API keys',
  'nav.redeem': 'Redeem code',
  'nav.requests': 'Requests',
  'nav.signOut': 'Sign out',
  'nav.language': 'Language',
  'common.loading': 'Loading…',
  'common.error': 'Something went wrong: ',
  'common.microYuan': 'micro-yuan',
  'signIn.title': 'Sign in',
  'signIn.email': 'Email',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.wrong': 'Wrong email or password.',
  'signIn.throttled': 'Too many failed attempts; try again later.',
  'signIn.totp': 'The 6-digit code of your authenticator app',
  'signIn.totpWrong': 'Wrong or already used code; enter a new one.',
  'invite.title': 'Set your password',
  'invite.for': 'Set the console password for:',
  'invite.password': 'New password (at least 10 characters)',
  'invite.confirm': 'New password again',
  'invite.mismatch': 'The two passwords differ.',
  'invite.submit': 'Set password and sign in',
  'invite.unusable':
    'This invitation link is unknown, used or expired; ask an operator for a new one.',
  'overview.title': 'Overview',
  'overview.balance': 'Balance',
  'overview.held': 'Held',
  'overview.available': 'Available',
  'overview.owed': 'Refund owed',
  'overview.owedNote':
    'Refunded money that could not be taken back at the time: money released from holds or topped up pays it first.',
  'overview.account': 'Account',
  'overview.budget': 'Budget left',
  'overview.budgetSpent': 'Spent',
  'overview.budgetResets': 'resets',
  'overview.window.daily': 'daily',
  'overview.window.weekly': 'weekly',
  'overview.window.monthly': 'monthly',
  'overview.window.total': 'in total',
  'keys.title': 'API keys',
  'keys.create': 'Create key',
  'keys.name': 'Name',
  'keys.kind': 'Kind',
  'keys.kind.personal': 'Personal',
  'keys.kind.service': 'Service',
  'keys.hint': 'Key',
  'keys.created': 'Created',
  'keys.lastUsed': 'Last used',
  'keys.state': 'State',
  'keys.active': 'Active',
  'keys.disabled': 'Disabled',
  'keys.disable': 'Disable',
  'keys.confirmDisable': 'Disable this key? Requests using it are refused at once.',
  'keys.newKey': 'New key',
  'keys.shownOnce':
    'This key is shown only this once. Copy it now and keep it safe: after you close or reload this page it cannot be shown again.',
  'keys.copy': 'Copy',
  'keys.copied': 'Copied',
  'keys.dismiss': 'I have saved it',
  'keys.none': 'No keys yet.',
  'keys.never': 'Never',
  'redeem.title': 'Redeem a code',
  'redeem.code': 'Redemption code',
  'redeem.submit': 'Redeem',
  'redeem.done': 'Redeemed. Balance now: ',
  'redeem.unusable': 'No such code, or it was used or has expired.',
  'requests.title': 'Requests',
  'requests.time': 'Time',
  'requests.id': 'Request id',
  'requests.model': 'Model',
  'requests.status': 'Status',
  'requests.amount': 'Amount',
  'requests.key': 'Key',
  'requests.none': 'No requests yet.',
  'requests.more': 'Load more',
  ...callerEn,
  ...assetEn,
  ...securityEn,
  ...paymentEn,
};

export type Language = 'zh-CN' | 'en';
export const LANGUAGES: readonly Language[] = ['zh-CN', 'en'];
const dictionaries: Record<Language, Record<MessageKey, string>> = { 'zh-CN': zhCN, en };
const STORAGE_KEY = 'tollgate.console.language';

/**
 * The remembered choice; else the browser's first preference that we speak (any `zh` is
 * `zh-CN`); else Chinese.
 */
export function initialLanguage(): Language {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === 'zh-CN' || stored === 'en') return stored;
  for (const preference of navigator.languages) {
    const lower = preference.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'zh-CN';
}

interface I18n {
  language: Language;
  setLanguage: (language: Language) => void;
  t: (key: MessageKey) => string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(initialLanguage);
  const value = useMemo<I18n>(
    () => ({
      language,
      setLanguage: (next) => {
        localStorage.setItem(STORAGE_KEY, next);
        document.documentElement.lang = next;
        setLanguageState(next);
      },
      t: (key) => dictionaries[language][key],
    }),
    [language],
  );
  document.documentElement.lang = language;
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const context = useContext(I18nContext);
  if (context === null) throw new Error('useI18n outside I18nProvider');
  return context;
}
