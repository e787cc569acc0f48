import type { AccountStatement, StatementMovement } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { DataTable, type Column } from '../components/DataTable.js';
import { DownloadLink } from '../components/DownloadLink.js';
import { Field, SubmitRow } from '../components/Field.js';
import { GatewayText } from '../components/PricingRule.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { AccountPicker } from './AccountPicker.js';
import { operatorApi, type Period } from './operator-api.js';

type OnError = (error: unknown) => void;

/**
 * An account's statement (the admin API's `GET .../statement`): every balance movement of a
 * period of UTC days, with its opening and closing balance; downloaded as JSON or CSV through
 * the console's request function (DownloadLink: the server names the CSV file). `?account=`
 * preselects an account (the account page links here).
 */
export function StatementsPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const [accountId, setAccountId] = useState(
    () => new URLSearchParams(window.location.search).get('account') ?? '',
  );
  const [period, setPeriod] = useState<Period>({ from: '', to: '' });
  const [statement, setStatement] = useState<AccountStatement | null>(null);
  const [error, setError] = useState<unknown>(null);
  const fail = (failure: unknown) => {
    onError(failure);
    setError(failure);
  };
  const show = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    operatorApi
      .statement(accountId.trim(), period)
      .then(setStatement)
      .catch((failure: unknown) => {
        fail(failure);
        setStatement(null);
      });
  };
  const columns: Column<StatementMovement>[] = [
    { id: 'time', header: t('op.when'), cell: (movement) => <When iso={movement.time} /> },
    { id: 'kind', header: t('op.kind'), cell: (movement) => t(`wallet.kind.${movement.kind}`) },
    {
      id: 'amount',
      header: t('op.amount'),
      number: true,
      cell: (movement) => <Yuan micro={movement.amount} />,
    },
    {
      id: 'balance',
      header: t('op.balance'),
      number: true,
      cell: (movement) => <Yuan micro={movement.balance} />,
    },
    {
      id: 'description',
      header: t('op.description'),
      cell: (movement) => <GatewayText summary={t('journal.text')} text={movement.description} />,
    },
    {
      id: 'reference',
      header: t('op.movementOf'),
      cell: (movement) => {
        const of = movement.reference ?? movement.task_id ?? movement.request_id;
        // An id or a reference: one long word, broken anywhere rather than widen the table.
        return of === null ? '—' : <code>{of}</code>;
      },
    },
  ];
  const shown = statement !== null && statement.account_id === accountId.trim();
  return (
    <section>
      <h1>{t('op.statements')}</h1>
      <p>{t('op.statementNote')}</p>
      <ErrorLine error={error} />
      <form className="card narrow" onSubmit={show}>
        <AccountPicker
          name="statement-account"
          label={t('op.pick.account')}
          required
          value={accountId}
          onChange={setAccountId}
          onError={onError}
        />
        <Field
          label={t('op.fromDay')}
          name="statement-from"
          type="date"
          value={period.from}
          onValue={(from) => setPeriod((given) => ({ ...given, from }))}
        />
        <Field
          label={t('op.toDay')}
          name="statement-to"
          type="date"
          value={period.to}
          onValue={(to) => setPeriod((given) => ({ ...given, to }))}
        />
        <SubmitRow label={t('op.show')} />
      </form>
      {shown && (
        <div className="card" data-statement={statement.account_id}>
          <h2>
            {t('op.statementOf')} · {statement.email} · {statement.from} – {statement.to}
          </h2>
          {!statement.complete && <p className="muted">{t('op.incomplete')}</p>}
          <dl className="figures operator-figures">
            <Figure label={t('op.opening')} micro={statement.opening_balance} />
            <Figure label={t('op.credits')} micro={statement.totals.credits} />
            <Figure label={t('op.debits')} micro={statement.totals.debits} />
            <Figure label={t('op.closing')} micro={statement.closing_balance} name="closing" />
          </dl>
          <p className="actions">
            {(['json', 'csv'] as const).map((format) => (
              <DownloadLink
                key={format}
                href={operatorApi.statementUrl(statement.account_id, period, format)}
                fetchFile={() => operatorApi.statementFile(statement.account_id, period, format)}
                fallbackName={`statement-${statement.account_id}-${statement.from}-${statement.to}.${format}`}
                onError={fail}
              >
                {t(format === 'json' ? 'op.downloadJson' : 'op.downloadCsv')}
              </DownloadLink>
            ))}
          </p>
          <DataTable
            rows={statement.movements}
            columns={columns}
            rowKey={(movement) => movement.id}
            rowAttributes={(movement) => ({ 'data-movement-kind': movement.kind })}
            empty={t('op.none')}
            label={t('op.more')}
          />
        </div>
      )}
    </section>
  );
}

function Figure({ label, micro, name }: { label: string; micro: number; name?: string }) {
  return (
    <div className="card" data-figure={name}>
      <dt>{label}</dt>
      <dd>
        <Yuan micro={micro} />
      </dd>
    </div>
  );
}
