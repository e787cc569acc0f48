import type { ApiKey } from '@tollgate/protocol';
import { lazy, Suspense, useMemo, useState, type FormEvent } from 'react';
import { api } from '../api.js';
import { callerApi, last30Days } from '../caller-api.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { Field } from '../components/Field.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { securityApi } from '../security-api.js';
import { useLoad } from '../useLoad.js';
import { ConsoleLink } from '../components/ConsoleLink.js';
import { ErrorLine } from './ErrorLine.js';
import { CallAddresses, HowToCall, type CallingKey } from './HowToCall.js';
import { KeyCreateOptions, KeyLimits, keyOptionsOf, NO_KEY_OPTIONS } from './KeyCreateOptions.js';
import { KeyRotate } from './KeyRotate.js';

// Chart.js, as the overview's chart: a chunk of its own, loaded with the pages that draw one.
const KeySpendChart = lazy(() =>
  import('../components/SpendChart.js').then((module) => ({ default: module.KeySpendChart })),
);

/**
 * Keys: create (the plaintext shown once, with a copy button), list with each key's spend over
 * the last 30 UTC days, disable.
 */
export function KeysPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const keys = useLoad(() => api.keys(), onError);
  const perKey = useLoad(() => {
    const { from, to } = last30Days(Date.now());
    return callerApi.keySpend(from, to);
  }, onError);
  const spend = new Map(perKey.value?.data.map((row) => [row.key_id, row.amount]));
  // The chart's bars: each key that spent, most first, named as people know it.
  const bars = useMemo(
    () =>
      (perKey.value?.data ?? [])
        .filter((row) => row.amount > 0)
        .sort((a, b) => b.amount - a.amount)
        .map((row) => ({
          micro: row.amount,
          label:
            row.key_name ??
            (row.key_hint !== null
              ? `${t('key.unnamed')} ${row.key_hint}`
              : t(row.key_id === null ? 'key.purged' : 'key.console')),
        })),
    [perKey.value, t],
  );
  const [name, setName] = useState('');
  const [options, setOptions] = useState(NO_KEY_OPTIONS);
  const [fresh, setFresh] = useState<CallingKey | null>(null);
  // The models the snippets may name (a chat model the new key may call).
  const callable = useLoad(() => callerApi.callableModels(), onError);
  const [copied, setCopied] = useState(false);
  const error = keys.error ?? perKey.error;
  const { fail } = keys;
  const clearError = () => {
    keys.setError(null);
    perKey.setError(null);
  };
  const load = () => {
    keys.reload();
    perKey.reload();
  };

  const create = (event: FormEvent) => {
    event.preventDefault();
    clearError();
    securityApi
      .createKey(name, keyOptionsOf(options))
      .then((created) => {
        setFresh({
          plaintext: created.key,
          allowed: created.models,
          optional: created.idempotency === 'optional',
        });
        setCopied(false);
        setName('');
        setOptions(NO_KEY_OPTIONS);
        load();
      })
      .catch(fail);
  };
  const disable = (id: string) => {
    if (!window.confirm(t('keys.confirmDisable'))) return;
    api.disableKey(id).then(load).catch(fail);
  };
  const copy = () => {
    if (fresh === null) return;
    void navigator.clipboard.writeText(fresh.plaintext).then(() => setCopied(true));
  };
  const columns: Column<ApiKey>[] = [
    {
      id: 'name',
      header: t('keys.name'),
      cell: (key) => key.name ?? <span className="muted">{t('key.unnamed')}</span>,
    },
    {
      id: 'hint',
      header: t('keys.hint'),
      cell: (key) => <code className="key-hint">{key.hint}</code>,
    },
    {
      id: 'kind',
      header: t('keys.kind'),
      cell: (key) => t(key.kind === 'service' ? 'keys.kind.service' : 'keys.kind.personal'),
    },
    { id: 'created', header: t('keys.created'), cell: (key) => <When iso={key.created_at} /> },
    { id: 'used', header: t('keys.lastUsed'), cell: (key) => <When iso={key.last_used_at} /> },
    { id: 'limits', header: t('keyOptions.limits'), cell: (key) => <KeyLimits apiKey={key} /> },
    {
      id: 'spend',
      header: t('keys.spend30'),
      number: true,
      cell: (key) => <Yuan micro={spend.get(key.id) ?? 0} />,
      cellAttributes: () => ({ 'data-key-spend': '' }),
    },
    {
      id: 'state',
      header: t('keys.state'),
      cell: (key) => (key.disabled_at === null ? t('keys.active') : t('keys.disabled')),
    },
    {
      id: 'disable',
      header: t('keys.disable'),
      hiddenHeader: true,
      cell: (key) => (
        <>
          <KeyRotate
            apiKey={key}
            onRotated={(plaintext) => {
              // The new key keeps the old one's allowlist and idempotency choice (docs/keys.md).
              setFresh({
                plaintext,
                allowed: key.models,
                optional: key.idempotency === 'optional',
              });
              setCopied(false);
              load();
            }}
            onError={fail}
          />
          {key.disabled_at === null && (
            <button type="button" className="danger" onClick={() => disable(key.id)}>
              {t('keys.disable')}
            </button>
          )}
        </>
      ),
    },
  ];

  return (
    <section>
      <h1>{t('keys.title')}</h1>
      <ErrorLine error={error} />
      {fresh !== null && (
        <div className="card notice" role="status">
          <h2>{t('keys.newKey')}</h2>
          <p className="warning">{t('keys.shownOnce')}</p>
          <p className="secret">
            <code data-testid="new-key">{fresh.plaintext}</code>
          </p>
          <p className="actions">
            <button type="button" onClick={copy}>
              {copied ? t('keys.copied') : t('keys.copy')}
            </button>
            <button type="button" className="secondary" onClick={() => setFresh(null)}>
              {t('keys.dismiss')}
            </button>
          </p>
        </div>
      )}
      {fresh !== null ? (
        <HowToCall models={callable.value?.data ?? null} apiKey={fresh} />
      ) : (
        <div className="card call-summary">
          <CallAddresses />
          <p className="muted">
            <ConsoleLink to="/models">{t('howToCall.more')}</ConsoleLink>
          </p>
        </div>
      )}
      <form className="inline card" onSubmit={create}>
        <Field
          label={t('keys.name')}
          name="key-name"
          maxLength={100}
          value={name}
          onValue={setName}
        />
        <KeyCreateOptions value={options} onChange={setOptions} onError={fail} />
        <button type="submit">{t('keys.create')}</button>
      </form>
      {bars.length > 0 && (
        <div className="card" data-key-spend-card>
          <h2>{t('key.spendTitle')}</h2>
          <Suspense fallback={null}>
            <KeySpendChart bars={bars} label={t('key.spendChart')} />
          </Suspense>
        </div>
      )}
      <DataTable
        rows={keys.value?.data ?? null}
        columns={columns}
        rowKey={(key) => key.id}
        rowAttributes={(key) => ({ 'data-key-id': key.id })}
        empty={t('keys.none')}
        failed={error !== null}
      />
    </section>
  );
}
