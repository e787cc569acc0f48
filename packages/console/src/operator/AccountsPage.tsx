import { useState, type FormEvent } from 'react';
import type { Account } from '../api.js';
import { Yuan, When } from '../money.js';
import { navigate } from '../router.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { AllowedIpsForm, BudgetForm, BudgetLine } from './LimitsForms.js';
import { operatorApi, type LimitedKey } from './operator-api.js';
import { parseYuan, useOperatorText } from './operator-i18n.js';
import { useLoad } from './useLoad.js';

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
  const t = useOperatorText();
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
        <label>
          {t('op.search')}
          <input name="account-search" value={query} onChange={(e) => setQuery(e.target.value)} />
        </label>
        <button type="submit">{t('op.searchButton')}</button>
      </form>
      <form className="inline card" onSubmit={create}>
        <label>
          {t('op.email')}
          <input
            name="account-email"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <button type="submit">{t('op.createAccount')}</button>
      </form>
      {list.value !== null && <AccountTable accounts={list.value.data} />}
    </section>
  );
}

function AccountTable({ accounts }: { accounts: Account[] }) {
  const t = useOperatorText();
  if (accounts.length === 0) return <p>{t('op.none')}</p>;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={t('op.more')}>
      <table>
        <thead>
          <tr>
            <th scope="col">{t('op.email')}</th>
            <th scope="col">{t('op.id')}</th>
            <th scope="col">{t('op.balance')}</th>
            <th scope="col">{t('op.available')}</th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((account) => (
            <tr key={account.id} data-account-id={account.id}>
              <td>
                <a
                  href={`/console/admin/accounts/${account.id}`}
                  onClick={(event) => {
                    event.preventDefault();
                    navigate(`/admin/accounts/${account.id}`);
                  }}
                >
                  {account.email}
                </a>
              </td>
              <td>
                <code>{account.id}</code>
              </td>
              <td>
                <Yuan micro={account.balance} />
              </td>
              <td>
                <Yuan micro={account.available} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AccountDetail({ accountId, onError }: { accountId: string; onError: OnError }) {
  const t = useOperatorText();
  const account = useLoad(() => operatorApi.account(accountId), onError);
  const keys = useLoad(() => operatorApi.keys(accountId), onError);
  const members = useLoad(() => operatorApi.members(accountId), onError);
  const [amount, setAmount] = useState('');
  const [reference, setReference] = useState('');
  const [invalid, setInvalid] = useState(false);
  const [done, setDone] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const topUp = (event: FormEvent) => {
    event.preventDefault();
    const micro = parseYuan(amount);
    setInvalid(micro === null);
    setDone(false);
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
  return (
    <section>
      <h1>{shown?.email ?? accountId}</h1>
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
        </dl>
      )}
      <form className="card narrow" onSubmit={topUp}>
        <h2>{t('op.topUp')}</h2>
        <label>
          {t('op.amountYuan')}
          <input
            name="topup-amount"
            inputMode="decimal"
            required
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
          />
        </label>
        <label>
          {t('op.reference')}
          <input
            name="topup-reference"
            required
            maxLength={200}
            value={reference}
            onChange={(e) => setReference(e.target.value)}
          />
        </label>
        {invalid && (
          <p role="alert" className="error">
            {t('op.badAmount')}
          </p>
        )}
        {done && shown !== null && (
          <p role="status" className="success">
            {t('op.toppedUp')}
            <Yuan micro={shown.balance} />
          </p>
        )}
        <button type="submit">{t('op.topUp')}</button>
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
      {keys.value !== null && keys.value.data.length === 0 && <p>{t('op.none')}</p>}
      {keys.value !== null && keys.value.data.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('op.more')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('op.email')}</th>
                <th scope="col">{t('op.id')}</th>
                <th scope="col">{t('op.when')}</th>
                <th scope="col">{t('op.active')}</th>
                <th scope="col">{t('op.budget')}</th>
                <th scope="col">{t('op.allowedIps')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('op.action')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.value.data.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td>{key.name ?? '—'}</td>
                  <td>
                    <code>{key.hint}</code>
                  </td>
                  <td>
                    <When iso={key.last_used_at} />
                  </td>
                  <td>{key.disabled_at === null ? t('op.active') : t('op.disabled')}</td>
                  <td>
                    <BudgetLine budget={key.budget} />
                  </td>
                  <td>{key.allowed_ips === null ? t('op.anyIp') : key.allowed_ips.join(', ')}</td>
                  <td>
                    <button type="button" className="secondary" onClick={() => setEditing(key.id)}>
                      {t('op.edit')}
                    </button>{' '}
                    {key.disabled_at === null && (
                      <button type="button" className="danger" onClick={() => disable(key.id)}>
                        {t('op.disable')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
  apiKey: LimitedKey | undefined;
  onSaved: () => void;
  onFail: OnError;
}) {
  const t = useOperatorText();
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
