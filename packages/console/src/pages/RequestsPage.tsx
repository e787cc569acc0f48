import { useCallback, useEffect, useState } from 'react';
import { api, type RequestSummary } from '../api.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { ErrorLine } from './ErrorLine.js';

/** Every key's records of the account, newest first, a page at a time. */
export function RequestsPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [rows, setRows] = useState<RequestSummary[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = useCallback(
    (from: string | null) => {
      api
        .requests(from)
        .then((page) => {
          setRows((before) => (from === null ? page.data : [...(before ?? []), ...page.data]));
          setCursor(page.has_more ? page.next_cursor : null);
        })
        .catch((failure: unknown) => {
          onError(failure);
          setError(failure);
        });
    },
    [onError],
  );
  useEffect(() => load(null), [load]);
  return (
    <section>
      <h1>{t('requests.title')}</h1>
      <ErrorLine error={error} />
      {rows === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : rows.length === 0 ? (
        <p>{t('requests.none')}</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('requests.time')}</th>
                <th scope="col">{t('requests.id')}</th>
                <th scope="col">{t('requests.model')}</th>
                <th scope="col">{t('requests.status')}</th>
                <th scope="col">{t('requests.amount')}</th>
                <th scope="col">{t('requests.key')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} data-request-id={row.id}>
                  <td>
                    <When iso={row.created_at} />
                  </td>
                  <td>
                    <code>{row.id}</code>
                  </td>
                  <td>{row.model ?? '—'}</td>
                  <td>{row.status}</td>
                  <td className="number">
                    {row.bill === null ? '—' : <Yuan micro={row.bill.amount} />}
                  </td>
                  <td>
                    <code>{row.key_id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor !== null && (
        <button type="button" className="secondary" onClick={() => load(cursor)}>
          {t('requests.more')}
        </button>
      )}
    </section>
  );
}
