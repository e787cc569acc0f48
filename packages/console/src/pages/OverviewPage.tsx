import { api } from '../api.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';
import { OverviewSpend } from './OverviewSpend.js';

export function OverviewPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const { value: account, error } = useLoad(() => api.account(), onError);
  return (
    <section>
      <h1>{t('overview.title')}</h1>
      <ErrorLine error={error} />
      {account === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : (
        <>
          <p className="muted">
            {t('overview.account')}: <code>{account.id}</code>
          </p>
          <div className="figures">
            <Figure label={t('overview.balance')} micro={account.balance} name="balance" />
            <Figure label={t('overview.held')} micro={account.held} name="held" />
            <Figure label={t('overview.available')} micro={account.available} name="available" />
            {account.owed > 0 && (
              <Figure label={t('overview.owed')} micro={account.owed} name="owed" />
            )}
            {account.budget !== null && (
              <Figure label={t('overview.budget')} micro={account.budget.remaining} name="budget" />
            )}
          </div>
          {account.owed > 0 && (
            <p className="muted" data-owed-line>
              {t('overview.owedNote')}
            </p>
          )}
          {account.budget !== null && (
            <p className="muted" data-budget-line>
              {t('overview.budgetSpent')} <Yuan micro={account.budget.spent} /> /{' '}
              <Yuan micro={account.budget.limit} /> ({t(`overview.window.${account.budget.window}`)}
              {account.budget.resets_at !== null && (
                <>
                  , {t('overview.budgetResets')} <When iso={account.budget.resets_at} />
                </>
              )}
              )
            </p>
          )}
          <OverviewSpend onError={onError} />
        </>
      )}
    </section>
  );
}

function Figure({ label, micro, name }: { label: string; micro: number; name: string }) {
  return (
    <div className="card figure" data-figure={name}>
      <h2>{label}</h2>
      <p className="big">
        <Yuan micro={micro} />
      </p>
    </div>
  );
}
