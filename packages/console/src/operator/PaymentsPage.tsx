import { useState } from 'react';
import { GatewayText } from '../components/PricingRule.js';
import { useI18n } from '../i18n.js';
import { Yuan, When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { paymentApi } from '../payment-api.js';
import { useLoad } from '../useLoad.js';

/**
 * Online top-up orders of every account (docs/payments.md): state, refunds, what a refund could
 * not take back (owed), and the flag that says why an operator should look (an amount the
 * provider reported that differs from the order; a refund of spent money).
 */
export function PaymentsPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [flaggedOnly, setFlaggedOnly] = useState(false);
  return (
    <section>
      <h1>{t('op.payments')}</h1>
      <label className="inline">
        <input
          type="checkbox"
          checked={flaggedOnly}
          onChange={(event) => setFlaggedOnly(event.target.checked)}
        />
        {t('op.flaggedOnly')}
      </label>
      {/* A new list per filter: it loads once for what it shows. */}
      <OrdersTable key={String(flaggedOnly)} flaggedOnly={flaggedOnly} onError={onError} />
    </section>
  );
}

function OrdersTable({
  flaggedOnly,
  onError,
}: {
  flaggedOnly: boolean;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const page = useLoad(() => paymentApi.allOrders(flaggedOnly), onError);
  return (
    <>
      <ErrorLine error={page.error} />
      {page.value !== null && (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('op.payments')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('op.when')}</th>
                <th scope="col">{t('op.id')}</th>
                <th scope="col">{t('op.account')}</th>
                <th scope="col">{t('op.amount')}</th>
                <th scope="col">{t('op.state')}</th>
                <th scope="col">{t('op.refunded')}</th>
                <th scope="col">{t('op.owed')}</th>
                <th scope="col">{t('op.flag')}</th>
              </tr>
            </thead>
            <tbody>
              {page.value.data.map((order) => (
                <tr key={order.id} data-order-state={order.state}>
                  <td>
                    <When iso={order.created_at} />
                  </td>
                  <td>
                    <code>{order.id}</code>
                  </td>
                  <td>
                    <span className="wrap-anywhere" title={order.account_id}>
                      {order.account_email ?? order.account_id}
                    </span>
                  </td>
                  <td>
                    <Yuan micro={order.amount} />
                  </td>
                  <td>{t(`topup.state.${order.state}`)}</td>
                  <td>
                    <Yuan micro={order.refunded_amount} />
                  </td>
                  <td>{order.refund_owed > 0 ? <Yuan micro={order.refund_owed} /> : '—'}</td>
                  <td>
                    {order.flag === null ? (
                      '—'
                    ) : (
                      <>
                        {t('op.flagged')}
                        <GatewayText summary={t('op.flagText')} text={order.flag} />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
