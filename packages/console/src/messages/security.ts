import type { MessageTable } from './table.js';

/**
 * The security page (sessions, password, TOTP), self sign-up, and the keys page's options
 * (allowlist, expiry, rotation): issue 20, items 2–3.
 */
export const securityMessages = {
  'nav.security': { 'zh-CN': '账号安全', en: 'Security' },
  'signUp.link': { 'zh-CN': '没有账号？注册', en: 'No account? Sign up' },
  'signUp.title': { 'zh-CN': '注册', en: 'Sign up' },
  'signUp.note': {
    'zh-CN': '注册会创建一个新的账户（余额为 0），你是它的成员。',
    en: 'Signing up creates a new account (balance 0) with you as its member.',
  },
  'signUp.submit': { 'zh-CN': '注册并登录', en: 'Sign up and sign in' },
  'signUp.taken': {
    'zh-CN': '此邮箱不能用于注册。如果是你的邮箱，请直接登录，或请运营人员发送邀请。',
    en: 'This email cannot sign up here. If it is yours, sign in, or ask an operator for an invitation.',
  },
  'signUp.throttled': {
    'zh-CN': '此地址注册次数过多，请稍后再试。',
    en: 'Too many sign-ups from this address; try again later.',
  },
  'signUp.toSignIn': { 'zh-CN': '已有账号？登录', en: 'Have an account? Sign in' },
  'security.title': { 'zh-CN': '账号安全', en: 'Security' },
  'security.sessions': { 'zh-CN': '登录会话', en: 'Sessions' },
  'security.address': { 'zh-CN': '地址', en: 'Address' },
  'security.browser': { 'zh-CN': '浏览器', en: 'Browser' },
  'security.signedIn': { 'zh-CN': '登录时间', en: 'Signed in' },
  'security.lastSeen': { 'zh-CN': '最近活动', en: 'Last active' },
  'security.current': { 'zh-CN': '当前会话', en: 'This session' },
  'security.revoke': { 'zh-CN': '结束会话', en: 'End session' },
  'security.confirmRevoke': {
    'zh-CN': '确定结束此会话？该设备需要重新登录。',
    en: 'End this session? That device will have to sign in again.',
  },
  'security.password': { 'zh-CN': '修改密码', en: 'Change password' },
  'security.currentPassword': { 'zh-CN': '当前密码', en: 'Current password' },
  'security.newPassword': {
    'zh-CN': '新密码（至少 10 个字符）',
    en: 'New password (at least 10 characters)',
  },
  'security.confirmPassword': { 'zh-CN': '再次输入新密码', en: 'New password again' },
  'security.changePassword': { 'zh-CN': '修改密码', en: 'Change password' },
  'security.passwordChanged': {
    'zh-CN': '密码已修改，你的其他会话均已退出登录。',
    en: 'Password changed. Your other sessions were signed out.',
  },
  'security.passwordNote': {
    'zh-CN': '修改密码会结束除当前会话外的所有会话。',
    en: 'Changing the password ends every session but this one.',
  },
  'security.passwordWrong': { 'zh-CN': '当前密码错误。', en: 'The current password is wrong.' },
  'security.totp': { 'zh-CN': '两步验证（TOTP）', en: 'Two-step verification (TOTP)' },
  'security.totpOn': {
    'zh-CN': '已开启：登录时需要验证器应用中的验证码。',
    en: 'On: signing in asks for the code of your authenticator app.',
  },
  'security.totpOff': {
    'zh-CN': '未开启。开启后，登录时除密码外还需要验证器应用中的 6 位验证码。',
    en: 'Off. Once on, signing in asks for the 6-digit code of your authenticator app as well as the password.',
  },
  'security.totpSetUp': { 'zh-CN': '设置两步验证', en: 'Set up two-step verification' },
  'security.totpSecret': {
    'zh-CN': '密钥（手动输入到验证器应用）',
    en: 'Secret (type it into your authenticator app)',
  },
  'security.totpUri': {
    'zh-CN': 'otpauth 链接（可复制到支持的应用）',
    en: 'otpauth link (paste it into an app that takes one)',
  },
  'security.totpShownOnce': {
    'zh-CN': '密钥只显示这一次。添加到验证器应用后，输入应用显示的验证码以开启。',
    en: 'The secret is shown only this once. Add it to your authenticator app, then enter the code it shows to turn this on.',
  },
  'security.totpCode': {
    'zh-CN': '验证器应用中的 6 位验证码',
    en: 'The 6-digit code of your authenticator app',
  },
  'security.totpEnable': { 'zh-CN': '确认并开启', en: 'Confirm and turn on' },
  'security.totpEnabled': { 'zh-CN': '两步验证已开启。', en: 'Two-step verification is on.' },
  'security.totpWrong': {
    'zh-CN': '验证码错误或已使用，请等待下一个验证码。',
    en: 'Wrong or already used code; wait for the next one.',
  },
  'security.totpRemove': { 'zh-CN': '关闭两步验证', en: 'Turn off two-step verification' },
  'security.totpRemoveNote': {
    'zh-CN': '输入当前验证码，或在手机丢失时输入密码。',
    en: 'Enter a current code, or your password if you lost your phone.',
  },
  'security.totpRemoveCode': {
    'zh-CN': '当前验证码（或留空并填写密码）',
    en: 'Current code (or leave empty and give the password)',
  },
  'security.totpRemovePassword': { 'zh-CN': '密码', en: 'Password' },
  'security.totpRemoved': { 'zh-CN': '两步验证已关闭。', en: 'Two-step verification is off.' },
  'security.totpRequired': {
    'zh-CN': '此网关要求运营人员保持两步验证，不能关闭。',
    en: 'Operators must keep two-step verification on this gateway.',
  },
  'security.copy': { 'zh-CN': '复制', en: 'Copy' },
  'security.copied': { 'zh-CN': '已复制', en: 'Copied' },
  'keyOptions.models': { 'zh-CN': '允许的模型', en: 'Allowed models' },
  'keyOptions.modelsHint': {
    'zh-CN': '不勾选任何模型 = 允许所有模型。',
    en: 'None ticked = every model.',
  },
  'keyOptions.expiry': {
    'zh-CN': '过期日期（可选，当天结束时过期）',
    en: 'Expires on (optional, at the end of that day)',
  },
  'keyOptions.optionalIdempotency': {
    'zh-CN': '用于无法为每个请求发送 Idempotency-Key 的工具（如编程智能体）：由网关分配',
    en: 'For a tool that cannot send an Idempotency-Key per request (a coding agent): the gateway assigns it',
  },
  'keyOptions.limits': { 'zh-CN': '限制', en: 'Limits' },
  'keyOptions.allModels': { 'zh-CN': '所有模型', en: 'Every model' },
  'keyOptions.expires': { 'zh-CN': '过期', en: 'Expires' },
  'keyOptions.noExpiry': { 'zh-CN': '不过期', en: 'No expiry' },
  'keyRotate.rotate': { 'zh-CN': '轮换', en: 'Rotate' },
  'keyRotate.confirm': {
    'zh-CN': '轮换此密钥？将生成新密钥（只显示一次），旧密钥立即停用。',
    en: 'Rotate this key? A new key is made (shown once) and this one is disabled at once.',
  },
  'keyRotate.rotated': { 'zh-CN': '已轮换', en: 'Rotated' },
} satisfies MessageTable;
