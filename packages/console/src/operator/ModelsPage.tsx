import { useState, type FormEvent } from 'react';
import type { ModelPrices, OperatorModel } from '../console-types.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/** The API families the console names (`models.family.*`, as the member's models page). */
const FAMILIES = new Set(['chat', 'ocr', 'embeddings', 'rerank', 'images', 'videos', 'h3']);

/**
 * Models (read only, from the configuration) with their current price version; a model's
 * prices edited as JSON and saved as a new version (the price book checks them), and its history.
 */
export function ModelsPage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const models = useLoad(() => operatorApi.models(), onError);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section>
      <h1>{t('op.models')}</h1>
      <ErrorLine error={models.error} />
      {models.value !== null && (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={t('op.more')}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t('op.model')}</th>
                <th scope="col">{t('op.upstream')}</th>
                <th scope="col">{t('op.families')}</th>
                <th scope="col">{t('op.priceVersion')}</th>
              </tr>
            </thead>
            <tbody>
              {models.value.data.map((model) => (
                <tr key={model.id} data-model-id={model.id}>
                  <td>
                    <button type="button" className="secondary" onClick={() => setOpen(model.id)}>
                      {model.id}
                    </button>
                  </td>
                  <td>{model.upstream}</td>
                  <td>
                    {model.families
                      .map((family) =>
                        FAMILIES.has(family) ? t(`models.family.${family}` as MessageKey) : family,
                      )
                      .join(', ')}
                  </td>
                  <td>
                    <code>{model.current.price_version}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open !== null && models.value !== null && (
        <PriceEditor
          key={open}
          model={models.value.data.find((candidate) => candidate.id === open)}
          onSaved={models.reload}
          onError={onError}
        />
      )}
    </section>
  );
}

function PriceEditor({
  model,
  onSaved,
  onError,
}: {
  model: OperatorModel | undefined;
  onSaved: () => void;
  onError: OnError;
}) {
  const { t } = useI18n();
  const modelId = model?.id ?? '';
  const history = useLoad(() => operatorApi.priceHistory(modelId), onError);
  const [text, setText] = useState(JSON.stringify(model?.current.prices ?? {}, null, 2));
  const [invalid, setInvalid] = useState(false);
  const save = (event: FormEvent) => {
    event.preventDefault();
    let prices: unknown;
    try {
      prices = JSON.parse(text);
    } catch {
      prices = null;
    }
    const isObject = typeof prices === 'object' && prices !== null && !Array.isArray(prices);
    setInvalid(!isObject);
    if (!isObject) return;
    operatorApi
      .setPrices(modelId, prices)
      .then(() => {
        history.reload();
        onSaved();
      })
      .catch(history.fail);
  };
  return (
    <div className="card">
      <h2>{modelId}</h2>
      <ErrorLine error={history.error} />
      <form onSubmit={save}>
        <label>
          {t('op.editPrices')}
          <textarea
            name="prices"
            rows={8}
            spellCheck={false}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        {invalid && (
          <p role="alert" className="error">
            {t('op.badJson')}
          </p>
        )}
        <button type="submit">{t('op.savePrices')}</button>
      </form>
      <h3>{t('op.history')}</h3>
      <ul>
        {history.value?.data.map((entry: ModelPrices) => (
          <li key={entry.price_version} data-price-version={entry.price_version}>
            <code>{entry.price_version}</code> · <When iso={entry.created_at} />
          </li>
        ))}
      </ul>
    </div>
  );
}
