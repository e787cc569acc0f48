import type { WalletHold, WalletKey, WalletMovement } from '@tollgate/protocol';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { DownloadLink } from '../components/DownloadLink.js';
import { Field } from '../components/Field.js';
import { GatewayText } from '../components/PricingRule.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { usePagedList } from '../usePagedList.js';
import { walletApi, type WalletPeriod } from '../wallet-api.js';
import { ErrorLine } from './ErrorLine.js';

type OnError = (error: unknown) => void;

/**
 * The member's wallet, `/console/billing` (docs/console.md, "Wallet"): the balance, what is held
 * (each hold with what holds it, since when and what ends it), a period's movements with the
 * balance after each (read a page at a time), the period's statement as CSV, and the ways to add
 * money (top-up, redemption).
 */
export function BillingPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  return (
    <section>
      <h1>{t('wallet.title')}</h1>
      <p className="actions" data-wallet-links>
        <ConsoleLink to="/topup">{t('wallet.topUp')}</ConsoleLink>
        <ConsoleLink to="/redeem">{t('wallet.redeem')}</ConsoleLink>
      </p>
      <WalletHolds onError={onError} />
      <WalletMovements onError={onError} />
    </section>
  );
}

/** A key by its name (its hint when it has none), never by its id. */
export function KeyName({ walletKey }: { walletKey: WalletKey | null }) {
  const { t } = useI18n();
  if (walletKey === null) return <>—</>;
  if (walletKey.name !== null) return <>{walletKey.name}</>;
  return (
    <>
      {t('wallet.unnamedKey')} <code className="key-hint">{walletKey.hint}</code>
    </>
  );
}

function WalletHolds({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const { value: wallet, error } = useLoad(() => walletApi.wallet(), onError);
  const columns: Column<WalletHold>[] = [
    { id: 'since', header: t('wallet.since'), cell: (hold) => <When iso={hold.since} /> },
    {
      id: 'by',
      header: t('wallet.heldBy'),
      cell: (hold) => (
        <>
          {t(`wallet.holdKind.${hold.kind}`)}{' '}
          {hold.task_id === null ? (
            <code>{hold.request_id}</code>
          ) : (
            <ConsoleLink to={`/tasks/${encodeURIComponent(hold.task_id)}`}>
              <code>{hold.task_id}</code>
            </ConsoleLink>
          )}
        </>
      ),
    },
    { id: 'model', header: t('wallet.model'), cell: (hold) => hold.model ?? '—' },
    { id: 'key', header: t('wallet.key'), cell: (hold) => <KeyName walletKey={hold.key} /> },
    {
      id: 'state',
      header: t('wallet.state'),
      cell: (hold) =>
        hold.kind === 'task'
          ? `${t(`state.${hold.status}`)} · ${t(`state.${hold.billing_state}`)}`
          : t(`wallet.requestStatus.${hold.status}`),
    },
    {
      id: 'amount',
      header: t('wallet.amount'),
      number: true,
      cell: (hold) => <Yuan micro={hold.amount} />,
    },
    {
      id: 'ends',
      header: t('wallet.releasedBy'),
      cell: (hold) => (
        <>
          {t(`wallet.release.${hold.released_by}`)}
          {hold.until !== null && (
            <>
              {' '}
              <When iso={hold.until} />
            </>
          )}
        </>
      ),
    },
  ];
  return (
    <>
      <ErrorLine error={error} />
      {wallet === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : (
        <>
          <div className="figures">
            <Figure label={t('wallet.balance')} micro={wallet.balance} name="balance" />
            <Figure label={t('wallet.held')} micro={wallet.held} name="held" />
            <Figure label={t('wallet.available')} micro={wallet.available} name="available" />
            {wallet.owed > 0 && <Figure label={t('wallet.owed')} micro={wallet.owed} name="owed" />}
          </div>
          {wallet.owed > 0 && <p className="muted">{t('wallet.owedNote')}</p>}
          <div className="card" data-wallet-holds>
            <h2>{t('wallet.holds')}</h2>
            <p className="muted">{t('wallet.holdsNote')}</p>
            <DataTable
              rows={wallet.holds}
              columns={columns}
              rowKey={(hold) => hold.id}
              rowAttributes={(hold) => ({
                'data-hold-kind': hold.kind,
                'data-released-by': hold.released_by,
              })}
              empty={t('wallet.noHolds')}
              label={t('wallet.holds')}
            />
            {wallet.holds_truncated && <p className="muted">{t('wallet.holdsTruncated')}</p>}
          </div>
        </>
      )}
    </>
  );
}

const NO_PERIOD: WalletPeriod = { from: '', to: '' };

function WalletMovements({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  // The first page of the applied period; "load more" appends the next ones to it.
  const { draft, setDraft, applied, submit, first, rows, cursor, loadMore } = usePagedList({
    initial: NO_PERIOD,
    filtersOf: (period: WalletPeriod) => period,
    read: (period, pageCursor) => walletApi.movements(period, pageCursor),
    onError,
  });
  const shown = first.value;
  const columns: Column<WalletMovement>[] = [
    { id: 'time', header: t('wallet.time'), cell: (movement) => <When iso={movement.time} /> },
    {
      id: 'kind',
      header: t('wallet.kind'),
      cell: (movement) => t(`wallet.kind.${movement.kind}`),
    },
    {
      id: 'amount',
      header: t('wallet.amount'),
      number: true,
      // A hold or a release moves only `held`: no amount, rather than a ¥0.00 read as a charge.
      cell: (movement) =>
        movement.amount === 0 && (movement.kind === 'hold' || movement.kind === 'release') ? (
          '—'
        ) : (
          <Yuan micro={movement.amount} />
        ),
    },
    {
      id: 'held',
      header: t('wallet.heldChange'),
      number: true,
      cell: (movement) =>
        movement.held_change === 0 ? '—' : <Yuan micro={movement.held_change} />,
    },
    {
      id: 'balance',
      header: t('wallet.balanceAfter'),
      number: true,
      cell: (movement) => <Yuan micro={movement.balance} />,
    },
    { id: 'of', header: t('wallet.of'), cell: (movement) => <MovementOf movement={movement} /> },
    {
      id: 'key',
      header: t('wallet.key'),
      cell: (movement) => <KeyName walletKey={movement.key} />,
    },
  ];
  return (
    <div className="card" data-wallet-movements>
      <h2>{t('wallet.movements')}</h2>
      <p className="muted">{t('wallet.movementsNote')}</p>
      <form className="filters" onSubmit={submit}>
        <Field
          label={t('wallet.from')}
          name="wallet-from"
          type="date"
          value={draft.from}
          onValue={(from) => setDraft((given) => ({ ...given, from }))}
        />
        <Field
          label={t('wallet.to')}
          name="wallet-to"
          type="date"
          value={draft.to}
          onValue={(to) => setDraft((given) => ({ ...given, to }))}
        />
        <div className="actions">
          <button type="submit">{t('wallet.show')}</button>
          <DownloadLink
            className="button secondary"
            href={walletApi.statementUrl(applied)}
            fetchFile={() => walletApi.statementFile(applied)}
            fallbackName={`wallet-${shown?.from ?? 'period'}-${shown?.to ?? ''}.csv`}
            onError={first.fail}
          >
            {t('wallet.csv')}
          </DownloadLink>
        </div>
      </form>
      <ErrorLine error={first.error} />
      {shown !== null && (
        <>
          <p data-wallet-period={`${shown.from}/${shown.to}`}>
            {t('wallet.period')}: {shown.from} – {shown.to} (UTC) · {t('wallet.opening')}{' '}
            <Yuan micro={shown.opening_balance} /> · {t('wallet.openingHeld')}{' '}
            <Yuan micro={shown.opening_held} />
          </p>
          {!shown.complete && <p className="muted">{t('wallet.incomplete')}</p>}
        </>
      )}
      <DataTable
        rows={rows}
        columns={columns}
        rowKey={(movement) => movement.id}
        rowAttributes={(movement) => ({ 'data-movement-kind': movement.kind })}
        empty={t('wallet.none')}
        failed={first.error !== null}
        label={t('wallet.movements')}
      />
      {cursor !== null && (
        <button type="button" className="secondary" onClick={() => loadMore(cursor)}>
          {t('wallet.more')}
        </button>
      )}
    </div>
  );
}

/**
 * What a movement belongs to: a top-up's reference, a task, a request, else the journal's own
 * description (English, behind a disclosure).
 */
function MovementOf({ movement }: { movement: WalletMovement }) {
  const { t } = useI18n();
  if (movement.reference !== null) return <code>{movement.reference}</code>;
  if (movement.task_id !== null)
    return (
      <ConsoleLink to={`/tasks/${encodeURIComponent(movement.task_id)}`}>
        <code>{movement.task_id}</code>
      </ConsoleLink>
    );
  if (movement.request_id !== null)
    return (
      <>
        <code>{movement.request_id}</code>
        {movement.model !== null && <> · {movement.model}</>}
      </>
    );
  return <GatewayText summary={t('journal.text')} text={movement.description} />;
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
