import type { Account, ApiKey } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { Field, SubmitRow } from '../components/Field.js';
import { useI18n } from '../i18n.js';
import { Yuan, When, YuanField, submittedAmount } from '../money.js';
import { AMOUNT_RULES } from '../money-text.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { navigate } from '../router.js';
import { useLoad } from '../useLoad.js';
import { AllowedIpsForm, BudgetForm, BudgetLine } from './LimitsForms.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/**
 * Accounts: search and create; `/admin/accounts/<id>` opens one (top-up, budget, keys with their
 * budgets and allowed IPs, members).
 */
export function AccountsPage({ path, onError }: { path: string; onError: OnError }) {
  const opened = /^\/admin\/accounts\/([^/]+)$/.exec(path)?.[1];
  if (opened !== undefined)
    return <AccountDetail key={opened} accountId={decodeURIComponent(opened)} onError={onError} />;
  return <AccountList onError={onError} />;
}

function AccountList({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const [query, setQuery] = useState('');
  const [email, setEmail] = useState('');
  const list = useLoad(() => operatorApi.accounts(query.trim()), onError);
  const search = (event: FormEvent) => {
    event.preventDefault();
    list.reload();
  };
  const create = (event: FormEvent) => {
    event.preventDefault();
    operatorApi
      .createAccount(email.trim())
      .then((account) => navigate(`/admin/accounts/${account.id}`))
      .catch(list.fail);
  };
  return (
    <section>
      <h1>{t('op.accounts')}</h1>
      <ErrorLine error={list.error} />
      <form className="inline card" onSubmit={search} role="search">
        <Field label={t('op.search')} name="account-search" value={query} onValue={setQuery} />
        <button type="submit">{t('op.searchButton')}</button>
      </form>
      <form className="inline card" onSubmit={create}>
        <Field
          label={t('op.email')}
          name="account-email"
          type="email"
          required
          value={email}
          onValue={setEmail}
        />
        <button type="submit">{t('op.createAccount')}</button>
      </form>
      {list.value !== null && <AccountTable accounts={list.value.data} />}
    </section>
  );
}

function AccountTable({ accounts }: { accounts: Account[] }) {
  const { t } = useI18n();
  const columns: Column<Account>[] = [
    {
      id: 'email',
      header: t('op.email'),
      cell: (account) => (
        <ConsoleLink to={`/admin/accounts/${account.id}`}>{account.email}</ConsoleLink>
      ),
    },
    { id: 'id', header: t('op.id'), cell: (account) => <code>{account.id}</code> },
    {
      id: 'balance',
      header: t('op.balance'),
      cell: (account) => <Yuan micro={account.balance} />,
    },
    {
      id: 'available',
      header: t('op.available'),
      cell: (account) => <Yuan micro={account.available} />,
    },
  ];
  return (
    <DataTable
      rows={accounts}
      columns={columns}
      rowKey={(account) => account.id}
      rowAttributes={(account) => ({ 'data-account-id': account.id })}
      empty={t('op.none')}
      label={t('op.more')}
    />
  );
}

function AccountDetail({ accountId, onError }: { accountId: string; onError: OnError }) {
  const { t } = useI18n();
  const account = useLoad(() => operatorApi.account(accountId), onError);
  const keys = useLoad(() => operatorApi.keys(accountId), onError);
  const members = useLoad(() => operatorApi.members(accountId), onError);
  const [amount, setAmount] = useState('');
  const [reference, setReference] = useState('');
  const [done, setDone] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const topUp = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setDone(false);
    const micro = submittedAmount(event, 'topup-amount', amount, AMOUNT_RULES.movement);
    if (micro === null) return;
    operatorApi
      .topUp(accountId, micro, reference.trim())
      .then(() => {
        setDone(true);
        setAmount('');
        setReference('');
        account.reload();
      })
      .catch(account.fail);
  };
  const disable = (keyId: string) => {
    operatorApi.disableKey(keyId).then(keys.reload).catch(keys.fail);
  };
  const shown = account.value;
  const keyColumns: Column<ApiKey>[] = [
    {
      id: 'name',
      header: t('op.keyName'),
      cell: (key) => <span className="wrap-anywhere">{key.name ?? t('key.unnamed')}</span>,
    },
    {
      id: 'hint',
      header: t('op.keyHint'),
      cell: (key) => <code className="key-hint">{key.hint}</code>,
    },
    { id: 'used', header: t('op.lastUsed'), cell: (key) => <When iso={key.last_used_at} /> },
    {
      id: 'state',
      header: t('op.state'),
      cell: (key) => (key.disabled_at === null ? t('op.active') : t('op.disabled')),
    },
    { id: 'budget', header: t('op.budget'), cell: (key) => <BudgetLine budget={key.budget} /> },
    {
      id: 'ips',
      header: t('op.allowedIps'),
      cell: (key) => (key.allowed_ips === null ? t('op.anyIp') : key.allowed_ips.join(', ')),
    },
    {
      id: 'action',
      header: t('op.action'),
      hiddenHeader: true,
      cell: (key) => (
        <>
          <button type="button" className="secondary" onClick={() => setEditing(key.id)}>
            {t('op.edit')}
          </button>{' '}
          {key.disabled_at === null && (
            <button type="button" className="danger" onClick={() => disable(key.id)}>
              {t('op.disable')}
            </button>
          )}
        </>
      ),
    },
  ];
  return (
    <section>
      <h1>{shown?.email ?? accountId}</h1>
      <p>
        <ConsoleLink to={`/admin/statements?account=${encodeURIComponent(accountId)}`}>
          {t('op.statements')}
        </ConsoleLink>
      </p>
      <ErrorLine error={account.error ?? keys.error} />
      {shown !== null && (
        <dl className="figures operator-figures">
          <div className="card" data-figure="balance">
            <dt>{t('op.balance')}</dt>
            <dd>
              <Yuan micro={shown.balance} />
            </dd>
          </div>
          <div className="card">
            <dt>{t('op.held')}</dt>
            <dd>
              <Yuan micro={shown.held} />
            </dd>
          </div>
          <div className="card">
            <dt>{t('op.available')}</dt>
            <dd>
              <Yuan micro={shown.available} />
            </dd>
          </div>
          <div className="card" data-figure="owed">
            <dt>{t('op.owed')}</dt>
            <dd>
              <Yuan micro={shown.owed} />
            </dd>
          </div>
        </dl>
      )}
      <form className="card narrow" onSubmit={topUp}>
        <h2>{t('op.topUp')}</h2>
        <YuanField
          label={t('op.amountYuan')}
          name="topup-amount"
          rule={AMOUNT_RULES.movement}
          value={amount}
          onValue={setAmount}
        />
        <Field
          label={t('op.reference')}
          name="topup-reference"
          required
          maxLength={200}
          value={reference}
          onValue={setReference}
        />
        <SubmitRow
          label={t('op.topUp')}
          done={
            done &&
            shown !== null && (
              <>
                {t('op.toppedUp')}
                <Yuan micro={shown.balance} />
              </>
            )
          }
        />
      </form>
      {shown !== null && (
        <div className="card" data-account-budget>
          <h2>{t('op.budget')}</h2>
          <p>
            <BudgetLine budget={shown.budget} />
          </p>
          <BudgetForm
            key={JSON.stringify(shown.budget)}
            owner="accounts"
            ownerId={accountId}
            budget={shown.budget}
            onSaved={account.reload}
            onFail={account.fail}
          />
        </div>
      )}
      <h2>{t('op.keys')}</h2>
      {keys.value !== null && (
        <DataTable
          rows={keys.value.data}
          columns={keyColumns}
          rowKey={(key) => key.id}
          rowAttributes={(key) => ({ 'data-key-id': key.id })}
          empty={t('op.none')}
          label={t('op.more')}
        />
      )}
      {editing !== null && keys.value !== null && (
        <KeyLimits
          key={editing}
          apiKey={keys.value.data.find((candidate) => candidate.id === editing)}
          onSaved={keys.reload}
          onFail={keys.fail}
        />
      )}
      <h2>{t('op.members')}</h2>
      {members.value !== null && (
        <ul>
          {members.value.data.length === 0 && <li>{t('op.none')}</li>}
          {members.value.data.map((member) => (
            <li key={member.id}>{member.email}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One key's budget and allowed IPs, edited in a card under the keys table. */
function KeyLimits({
  apiKey,
  onSaved,
  onFail,
}: {
  apiKey: ApiKey | undefined;
  onSaved: () => void;
  onFail: OnError;
}) {
  const { t } = useI18n();
  if (apiKey === undefined) return null;
  return (
    <div className="card" data-key-limits={apiKey.id}>
      <h3>
        {apiKey.name ?? '—'} · <code>{apiKey.hint}</code>
      </h3>
      <h4>{t('op.budget')}</h4>
      <BudgetForm
        key={JSON.stringify(apiKey.budget)}
        owner="keys"
        ownerId={apiKey.id}
        budget={apiKey.budget}
        onSaved={onSaved}
        onFail={onFail}
      />
      <AllowedIpsForm
        key={JSON.stringify(apiKey.allowed_ips)}
        keyId={apiKey.id}
        allowedIps={apiKey.allowed_ips}
        onSaved={onSaved}
        onFail={onFail}
      />
    </div>
  );
}
