import type { Account } from '@tollgate/protocol';
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiFailure } from '../api.js';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { useI18n } from '../i18n.js';
import { Yuan } from '../money.js';
import { AwaitingFunds } from './AwaitingFunds.js';
import { Failure } from './ErrorLine.js';

export function RedeemPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [code, setCode] = useState('');
  const [account, setAccount] = useState<Account | null>(null);
  const [error, setError] = useState<ReactNode>(null);
  const [busy, setBusy] = useState(false);
  // Bumped by every top-up: what waits for funds is read again, each with its settle button.
  const [toppedUp, setToppedUp] = useState(0);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setAccount(null);
    api
      .redeem(code.trim())
      .then((after) => {
        setAccount(after);
        setCode('');
        setToppedUp((count) => count + 1);
      })
      .catch((failure: unknown) => {
        onError(failure);
        setError(
          failure instanceof ApiFailure && failure.code === 'NOT_FOUND' ? (
            t('redeem.unusable')
          ) : (
            <>
              {t('common.error')}
              <Failure error={failure} />
            </>
          ),
        );
      })
      .finally(() => setBusy(false));
  };
  return (
    <section>
      <h1>{t('redeem.title')}</h1>
      <p className="actions" data-redeem-links>
        <ConsoleLink to="/topup">{t('wallet.orTopUp')}</ConsoleLink>
        <ConsoleLink to="/billing">{t('wallet.toWallet')}</ConsoleLink>
      </p>
      <form className="card narrow" onSubmit={submit}>
        <label>
          {t('redeem.code')}
          <input
            name="code"
            required
            autoComplete="off"
            maxLength={100}
            value={code}
            onChange={(event) => setCode(event.target.value)}
          />
        </label>
        {error !== null && (
          <div role="alert" className="error">
            {error}
          </div>
        )}
        {account !== null && (
          <p role="status" className="success">
            {t('redeem.done')}
            <Yuan micro={account.balance} />
          </p>
        )}
        <button type="submit" disabled={busy}>
          {t('redeem.submit')}
        </button>
      </form>
      <AwaitingFunds onError={onError} refresh={toppedUp} />
    </section>
  );
}
