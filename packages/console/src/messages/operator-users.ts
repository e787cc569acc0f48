import type { MessageTable } from './table.js';

/** The operator's Users page (UsersPage). */
export const operatorUserMessages = {
  'op.users': { 'zh-CN': '控制台用户', en: 'Console users' },
  'op.usersNote': {
    'zh-CN':
      '停用用户会立即结束其在所有实例上的全部会话，作废未使用的邀请链接，并拒绝其登录；可随时重新启用（已结束的会话不会恢复）。每次操作都记入审计日志。不能停用自己，也不能停用最后一位可登录的运营人员。',
    en: 'Disabling a user ends every session of theirs on every instance at once, voids their unused invitation links and refuses their sign-in; they can be enabled again (ended sessions stay ended). Each change is written to the audit log. You cannot disable yourself, nor the last operator who can sign in.',
  },
  'op.secondFactor': { 'zh-CN': '两步验证', en: 'Second factor' },
  'op.on': { 'zh-CN': '已开启', en: 'On' },
  'op.off': { 'zh-CN': '未开启', en: 'Off' },
  'op.disableUser': { 'zh-CN': '停用', en: 'Disable' },
  'op.enableUser': { 'zh-CN': '重新启用', en: 'Enable again' },
  'op.confirmDisable': {
    'zh-CN': '停用此用户？其所有会话将立即结束。',
    en: 'Disable this user? Every session of theirs ends at once.',
  },
  'op.you': { 'zh-CN': '（你）', en: ' (you)' },
  'op.loadMore': { 'zh-CN': '加载更多', en: 'Load more' },
  'op.cli': { 'zh-CN': '命令行', en: 'command line' },
} satisfies MessageTable;
