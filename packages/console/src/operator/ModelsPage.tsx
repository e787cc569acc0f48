import type { ModelPriceVersion, OperatorModel } from '@tollgate/protocol';
import { useId, useState, type FormEvent } from 'react';
import { useI18n, type MessageKey } from '../i18n.js';
import { useAmountProblemText, useMicroYuanText, When } from '../money.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import {
  fieldTexts,
  formFields,
  parseField,
  parsePricesJson,
  PRICE_FORM_FIELDS,
  PRICE_RULE,
  pricesJson,
  withField,
  type TokenPriceField,
} from '../price-form.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/** The API families the console names (`models.family.*`, as the member's models page). */
const FAMILIES = new Set(['chat', 'ocr', 'embeddings', 'rerank', 'images', 'videos', 'h3']);

/**
 * Models (read only, from the configuration) with their current price version; a model's
 * prices edited and saved as a new version (the price book checks them), and its history. Token
 * prices are typed in yuan per million tokens (price-form.ts); every other price (tiers, service
 * tiers, per request, image and video tables) in the JSON behind a toggle, which the form keeps
 * in step: editing either updates the other, and the JSON is what is sent.
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
  const fields = formFields(model?.families ?? []);
  const history = useLoad(() => operatorApi.priceHistory(modelId), onError);
  const initial = model?.current.prices ?? {};
  const [text, setText] = useState(pricesJson(initial));
  const [typed, setTyped] = useState(() => fieldTexts(initial, fields));
  const [showJson, setShowJson] = useState(fields.length === 0);
  const [invalid, setInvalid] = useState<'json' | 'field' | null>(null);
  const jsonId = useId();
  // A field typed: the JSON follows (when it is an object; else saving says it is not).
  const typeField = (field: TokenPriceField, value: string) => {
    setTyped((before) => ({ ...before, [field]: value }));
    setInvalid(null);
    const prices = parsePricesJson(text);
    if (prices !== null) setText(pricesJson(withField(prices, field, value)));
  };
  // The JSON edited: the fields follow whenever it is an object.
  const typeJson = (value: string) => {
    setText(value);
    setInvalid(null);
    const prices = parsePricesJson(value);
    if (prices !== null) setTyped(fieldTexts(prices, fields));
  };
  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const refused = fields.find((field) => parseField(typed[field] ?? '')?.ok === false);
    if (refused !== undefined) {
      setInvalid('field');
      const input = event.currentTarget.elements.namedItem(`price-${refused}`);
      if (input instanceof HTMLInputElement) input.focus();
      return;
    }
    const prices = parsePricesJson(text);
    setInvalid(prices === null ? 'json' : null);
    if (prices === null) return;
    operatorApi
      .setPrices(modelId, prices)
      .then(() => {
        history.reload();
        onSaved();
      })
      .catch(history.fail);
  };
  return (
    <div className="card" data-price-editor={modelId}>
      <h2>{modelId}</h2>
      <ErrorLine error={history.error} />
      <form onSubmit={save} noValidate>
        {fields.length > 0 ? (
          <fieldset>
            <legend>{t('op.priceForm')}</legend>
            {fields.map((field) => (
              <PriceField
                key={field}
                field={field}
                value={typed[field] ?? ''}
                onValue={(value) => typeField(field, value)}
              />
            ))}
          </fieldset>
        ) : (
          <p className="muted" data-price-json-only>
            {t('op.pricesJsonOnly')}
          </p>
        )}
        <p className="muted">{t('op.pricesJsonRest')}</p>
        <button
          type="button"
          className="secondary"
          aria-expanded={showJson}
          aria-controls={jsonId}
          onClick={() => setShowJson((shown) => !shown)}
        >
          {t(showJson ? 'op.hideJson' : 'op.showJson')}
        </button>
        <div id={jsonId} className="price-json" hidden={!showJson}>
          <label>
            {t('op.editPrices')}
            <textarea
              name="prices"
              rows={12}
              spellCheck={false}
              value={text}
              onChange={(e) => typeJson(e.target.value)}
            />
          </label>
        </div>
        {invalid !== null && (
          <p role="alert" className="error">
            {t(invalid === 'json' ? 'op.badJson' : 'op.badPriceField')}
          </p>
        )}
        <button type="submit">{t('op.savePrices')}</button>
      </form>
      <h3>{t('op.history')}</h3>
      <ul>
        {history.value?.data.map((entry: ModelPriceVersion) => (
          <li key={entry.price_version} data-price-version={entry.price_version}>
            <code>{entry.price_version}</code> · <When iso={entry.created_at} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * One token price in yuan per million tokens: the micro-yuan it will save echoed under it as it
 * is typed, or why `parseYuan` refuses it; empty leaves the field out of the prices.
 */
function PriceField({
  field,
  value,
  onValue,
}: {
  field: TokenPriceField;
  value: string;
  onValue: (value: string) => void;
}) {
  const { t } = useI18n();
  const echoId = useId();
  const exact = useMicroYuanText();
  const problemText = useAmountProblemText();
  const parsed = parseField(value);
  const label = PRICE_FORM_FIELDS.find(([name]) => name === field)?.[1] ?? 'op.price.input';
  return (
    <div className="yuan-field" data-price-field={field}>
      <label>
        {t(label)}
        <input
          name={`price-${field}`}
          inputMode="decimal"
          autoComplete="off"
          value={value}
          aria-invalid={parsed !== null && !parsed.ok}
          aria-describedby={echoId}
          onChange={(event) => onValue(event.target.value)}
        />
      </label>
      <p
        id={echoId}
        className={parsed?.ok === false ? 'micro-echo error' : 'micro-echo muted'}
        aria-live="polite"
        data-micro-echo={parsed?.ok === true ? parsed.micro : undefined}
      >
        {parsed === null
          ? t('op.priceUnset')
          : parsed.ok
            ? `= ${exact(parsed.micro)}`
            : problemText(parsed.problem, PRICE_RULE)}
      </p>
    </div>
  );
}
