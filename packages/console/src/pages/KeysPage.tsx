import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, type ApiKey } from '../api.js';
import { useI18n } from '../i18n.js';
import { When } from '../money.js';
import { ErrorLine } from './ErrorLine.js';
import { securityApi } from '../security-api.js';
import { KeyCreateOptions, KeyLimits, keyOptionsOf, NO_KEY_OPTIONS } from './KeyCreateOptions.js';
import { KeyRotate } from './KeyRotate.js';

/** Keys: create (the plaintext shown once, with a copy button), list, disable. */
export function KeysPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [name, setName] = useState('');
  const [options, setOptions] = useState(NO_KEY_OPTIONS);
  const [fresh, setFresh] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fail = useCallback(
    (failure: unknown) => {
      onError(failure);
      setError(failure);
    },
    [onError],
  );
  const load = useCallback(() => {
    api
      .keys()
      .then((page) => setKeys(page.data))
      .catch(fail);
  }, [fail]);
  useEffect(load, [load]);

  const create = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    securityApi
      .createKey(name, keyOptionsOf(options))
      .then((created) => {
        setFresh(created.key);
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
    void navigator.clipboard.writeText(fresh).then(() => setCopied(true));
  };

  return (
    <section>
      <h1>{t('keys.title')}</h1>
      <ErrorLine error={error} />
      {fresh !== null && (
        <div className="card notice" role="status">
          <h2>{t('keys.newKey')}</h2>
          <p className="warning">{t('keys.shownOnce')}</p>
          <p className="secret">
            <code data-testid="new-key">{fresh}</code>
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
      <form className="inline card" onSubmit={create}>
        <label>
          {t('keys.name')}
          <input
            name="key-name"
            maxLength={100}
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <KeyCreateOptions value={options} onChange={setOptions} onError={fail} />
        <button type="submit">{t('keys.create')}</button>
      </form>
      {keys === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : keys.length === 0 ? (
        <p>{t('keys.none')}</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('keys.name')}</th>
                <th scope="col">{t('keys.hint')}</th>
                <th scope="col">{t('keys.kind')}</th>
                <th scope="col">{t('keys.created')}</th>
                <th scope="col">{t('keys.lastUsed')}</th>
                <th scope="col">{t('keyOptions.limits')}</th>
                <th scope="col">{t('keys.state')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('keys.disable')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td>{key.name ?? '—'}</td>
                  <td>
                    <code>{key.hint}</code>
                  </td>
                  <td>{t(key.kind === 'service' ? 'keys.kind.service' : 'keys.kind.personal')}</td>
                  <td>
                    <When iso={key.created_at} />
                  </td>
                  <td>
                    <When iso={key.last_used_at} />
                  </td>
                  <td>
                    <KeyLimits apiKey={key} />
                  </td>
                  <td>{key.disabled_at === null ? t('keys.active') : t('keys.disabled')}</td>
                  <td>
                    <KeyRotate
                      apiKey={key}
                      onRotated={(plaintext) => {
                        setFresh(plaintext);
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
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
