import type { ApiKey } from '@tollgate/protocol';
import { useI18n } from '../i18n.js';
import { securityApi, type KeyOptions } from '../security-api.js';
import { useLoad } from '../useLoad.js';
import './security.css';

/** The create form's options as typed: ticked models (none: every model), an expiry day or ''. */
export interface KeyOptionsDraft {
  models: string[];
  expiryDay: string;
  /** For a tool that cannot send a new Idempotency-Key per request (a coding agent). */
  optionalIdempotency: boolean;
}

export const NO_KEY_OPTIONS: KeyOptionsDraft = {
  models: [],
  expiryDay: '',
  optionalIdempotency: false,
};

/**
 * What the create call sends: no ticked model means every model (`models` left out), an expiry
 * day means the end of that day in the viewer's zone (the server refuses a past one; none:
 * `expires_at` left out), and the idempotency rule ticked.
 */
export function keyOptionsOf(draft: KeyOptionsDraft): KeyOptions {
  return {
    ...(draft.models.length === 0 ? {} : { models: draft.models }),
    ...(draft.expiryDay === ''
      ? {}
      : { expires_at: new Date(`${draft.expiryDay}T23:59:59.999`).toISOString() }),
    idempotency: draft.optionalIdempotency ? 'optional' : 'required',
  };
}

/** The allowlist (from the models a key may be allowed) and the expiry of a new key. */
export function KeyCreateOptions({
  value,
  onChange,
  onError,
}: {
  value: KeyOptionsDraft;
  onChange: (next: KeyOptionsDraft) => void;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const models = useLoad(() => securityApi.models(), onError);
  const toggle = (id: string, ticked: boolean) =>
    onChange({
      ...value,
      models: ticked ? [...value.models, id] : value.models.filter((model) => model !== id),
    });
  return (
    <div className="key-options">
      <fieldset>
        <legend>{t('keyOptions.models')}</legend>
        <p className="muted">{t('keyOptions.modelsHint')}</p>
        <div className="checks">
          {(models.value?.data ?? []).map((model) => (
            <label key={model.id} className="check">
              <input
                type="checkbox"
                name="key-model"
                value={model.id}
                checked={value.models.includes(model.id)}
                onChange={(event) => toggle(model.id, event.target.checked)}
              />
              <code>{model.id}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        {t('keyOptions.expiry')}
        <input
          type="date"
          name="key-expiry"
          value={value.expiryDay}
          onChange={(event) => onChange({ ...value, expiryDay: event.target.value })}
        />
      </label>
      <label className="check">
        <input
          type="checkbox"
          name="key-optional-idempotency"
          checked={value.optionalIdempotency}
          onChange={(event) => onChange({ ...value, optionalIdempotency: event.target.checked })}
        />
        {t('keyOptions.optionalIdempotency')}
      </label>
      <p className="muted">{t('keyOptions.optionalIdempotencyHint')}</p>
    </div>
  );
}

/** A key's allowlist and expiry, for its row in the keys table. */
export function KeyLimits({ apiKey }: { apiKey: ApiKey }) {
  const { t, language } = useI18n();
  const models = apiKey.models;
  const expires = apiKey.expires_at;
  return (
    <span className="key-limits">
      <span data-key-models>{models === null ? t('keyOptions.allModels') : models.join(', ')}</span>
      <span>
        {t('keyOptions.expires')}:{' '}
        {expires === null ? (
          t('keyOptions.noExpiry')
        ) : (
          // The day in the viewer's zone; the exact time on hover.
          <time dateTime={expires} title={new Date(expires).toLocaleString(language)}>
            {new Date(expires).toLocaleDateString(language)}
          </time>
        )}
      </span>
    </span>
  );
}
