import { useState, type FormEvent } from 'react';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { useI18n } from '../i18n.js';
import { submittedAmount, Yuan, YuanField, When } from '../money.js';
import { AMOUNT_RULES } from '../money-text.js';
import { paymentApi } from '../payment-api.js';
import { useLoad } from '../useLoad.js';
import { AwaitingFunds } from './AwaitingFunds.js';
import { ErrorLine } from './ErrorLine.js';

/**
 * Online top-up (docs/payments.md): an amount in yuan opens a checkout and the browser goes
 * there; back here (`?result=paid|cancelled`), the account's orders show what happened. The
 * balance moves only when the provider's signed webhook arrives, never from this page.
 */
export function TopUpPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const listed = useLoad(() => paymentApi.orders(), onError);
  const { error, setError, fail, reload: load } = listed;
  const orders = listed.value?.data ?? null;
  const status = listed.value?.payments ?? null;
  const [amount, setAmount] = useState('');
  const [busy, setBusy] = useState(false);
  const result = new URLSearchParams(window.location.search).get('result');
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    // Whole fen: the provider charges fen (AMOUNT_RULES.onlineTopUp).
    const micro = submittedAmount(event, 'amount', amount, AMOUNT_RULES.onlineTopUp);
    if (micro === null) return;
    setBusy(true);
    setError(null);
    paymentApi
      .start(micro)
      .then((started) => window.location.assign(started.checkout_url))
      .catch((failure: unknown) => {
        fail(failure);
        setBusy(false);
        load();
      });
  };

  return (
    <section>
      <h1>{t('topup.title')}</h1>
      <p className="actions" data-topup-links>
        <ConsoleLink to="/redeem">{t('wallet.orRedeem')}</ConsoleLink>
        <ConsoleLink to="/billing">{t('wallet.toWallet')}</ConsoleLink>
      </p>
      {result === 'paid' && (
        <p role="status" className="success">
          {t('topup.returnedPaid')}
        </p>
      )}
      {result === 'cancelled' && <p role="status">{t('topup.returnedCancelled')}</p>}
      {status !== null && !status.enabled && <p role="note">{t('topup.notConfigured')}</p>}
      {status?.enabled === true && (
        <form className="card narrow" onSubmit={submit}>
          <YuanField
            label={t('topup.amount')}
            name="amount"
            rule={AMOUNT_RULES.onlineTopUp}
            value={amount}
            onValue={setAmount}
          />
          <p className="hint">{t('topup.methods')}</p>
          <button type="submit" disabled={busy}>
            {t('topup.submit')}
          </button>
        </form>
      )}
      <ErrorLine error={error} />
      <h2>{t('topup.orders')}</h2>
      {orders !== null && orders.length === 0 && <p>{t('topup.none')}</p>}
      {orders !== null && orders.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('topup.time')}</th>
                <th scope="col">{t('topup.amount')}</th>
                <th scope="col">{t('topup.state')}</th>
                <th scope="col">{t('topup.refunded')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('topup.pay')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {orders.map((order) => (
                <tr key={order.id} data-order-state={order.state}>
                  <td>
                    <When iso={order.created_at} />
                  </td>
                  <td>
                    <Yuan micro={order.amount} />
                  </td>
                  <td>{t(`topup.state.${order.state}`)}</td>
                  <td>
                    {order.refunded_amount > 0 ? <Yuan micro={order.refunded_amount} /> : '—'}
                  </td>
                  <td>
                    {order.checkout_url !== null && (
                      <a href={order.checkout_url} rel="noopener noreferrer">
                        {t('topup.pay')}
                      </a>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {result === 'paid' && <AwaitingFunds onError={onError} refresh={orders?.length ?? 0} />}
    </section>
  );
}
