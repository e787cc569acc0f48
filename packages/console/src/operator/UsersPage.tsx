import type { ConsoleUser } from '@tollgate/protocol';
import { useState } from 'react';
import { api } from '../api.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/**
 * Console users (docs/console.md, "Taking access away"): every user with role, account, second
 * factor and state; a user disabled (every session ends at once, on every instance; invitations
 * die; sign-in refused) or enabled again. The server refuses disabling oneself and the last
 * operator who can sign in; the page offers no button for the first and shows the refusal of
 * the second.
 */
export function UsersPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const [rows, setRows] = useState<ConsoleUser[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const self = useLoad(() => api.session(), onError);
  const first = useLoad(async () => {
    const page = await operatorApi.users(null);
    setRows(page.data);
    setCursor(page.has_more ? page.next_cursor : null);
    return page;
  }, onError);
  const more = () => {
    if (cursor === null) return;
    operatorApi
      .users(cursor)
      .then((page) => {
        setRows((shown) => [...shown, ...page.data]);
        setCursor(page.has_more ? page.next_cursor : null);
      })
      .catch(first.fail);
  };
  const toggle = (user: ConsoleUser) => {
    const disable = user.disabled_at === null;
    if (disable && !window.confirm(t('op.confirmDisable'))) return;
    first.setError(null);
    operatorApi
      .switchUser(user.id, disable ? 'disable' : 'enable')
      .then((changed) =>
        setRows((shown) => shown.map((row) => (row.id === changed.id ? changed : row))),
      )
      .catch(first.fail);
  };
  const ownId = self.value?.user.id;
  const columns: Column<ConsoleUser>[] = [
    {
      id: 'email',
      header: t('op.email'),
      cell: (user) => (
        <>
          {user.email}
          {user.id === ownId && t('op.you')}
        </>
      ),
    },
    {
      id: 'role',
      header: t('op.role'),
      cell: (user) => (user.role === 'operator' ? t('op.roleOperator') : t('op.roleMember')),
    },
    {
      id: 'account',
      header: t('op.account'),
      cell: (user) => (user.account_id === null ? '—' : <code>{user.account_id}</code>),
    },
    {
      id: 'totp',
      header: t('op.secondFactor'),
      cell: (user) => (user.totp_enabled ? t('op.on') : t('op.off')),
    },
    {
      id: 'state',
      header: t('op.state'),
      cell: (user) =>
        user.disabled_at === null ? (
          t('op.active')
        ) : (
          <>
            {t('op.disabled')} · <When iso={user.disabled_at} />
          </>
        ),
      cellAttributes: (user) => ({
        'data-user-state': user.disabled_at === null ? 'active' : 'disabled',
      }),
    },
    {
      id: 'action',
      header: t('op.action'),
      hiddenHeader: true,
      cell: (user) =>
        user.id === ownId ? null : (
          <button
            type="button"
            className={user.disabled_at === null ? 'danger' : undefined}
            onClick={() => toggle(user)}
          >
            {user.disabled_at === null ? t('op.disableUser') : t('op.enableUser')}
          </button>
        ),
    },
  ];
  return (
    <section>
      <h1>{t('op.users')}</h1>
      <p>{t('op.usersNote')}</p>
      <ErrorLine error={first.error} />
      <DataTable
        rows={first.value === null ? null : rows}
        failed={first.error !== null && first.value === null}
        columns={columns}
        rowKey={(user) => user.id}
        rowAttributes={(user) => ({ 'data-user-email': user.email })}
        empty={t('op.none')}
        label={t('op.more')}
      />
      {cursor !== null && (
        <button type="button" onClick={more}>
          {t('op.loadMore')}
        </button>
      )}
    </section>
  );
}
