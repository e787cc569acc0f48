/**
 * The messages of the Users page (UsersPage.tsx), spread into operator-i18n.ts's two
 * dictionaries; `usersEn` is typed by `usersZhCN`'s keys, so a missing one fails the build.
 */
export const usersZhCN = {
  'op.users': '控制台用户',
  'op.usersNote':
    '停用用户会立即结束其在所有实例上的全部会话，作废未使用的邀请链接，并拒绝其登录；可随时重新启用（已结束的会话不会恢复）。每次操作都记入审计日志。不能停用自己，也不能停用最后一位可登录的运营人员。',
  'op.secondFactor': '两步验证',
  'op.on': '已开启',
  'op.off': '未开启',
  'op.disableUser': '停用',
  'op.enableUser': '重新启用',
  'op.confirmDisable': '停用此用户？其所有会话将立即结束。',
  'op.you': '（你）',
  'op.loadMore': '加载更多',
  'op.cli': '命令行',
} as const;

export const usersEn: Record<keyof typeof usersZhCN, string> = {
  'op.users': 'Console users',
  'op.usersNote':
    'Disabling a user ends every session of theirs on every instance at once, voids their unused invitation links and refuses their sign-in; they can be enabled again (ended sessions stay ended). Each change is written to the audit log. You cannot disable yourself, nor the last operator who can sign in.',
  'op.secondFactor': 'Second factor',
  'op.on': 'On',
  'op.off': 'Off',
  'op.disableUser': 'Disable',
  'op.enableUser': 'Enable again',
  'op.confirmDisable': 'Disable this user? Every session of theirs ends at once.',
  'op.you': ' (you)',
  'op.loadMore': 'Load more',
  'op.cli': 'command line',
};
