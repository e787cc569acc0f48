import type { ChatFeature, ConsoleModel } from '@tollgate/protocol';
import { callerApi } from '../caller-api.js';
import { DataTable, type Column } from '../components/DataTable.js';
import { Listed } from '../components/Listed.js';
import { useI18n } from '../i18n.js';
import { filled, priceRows, rowLabel, type PriceRow } from '../model-prices.js';
import { Yuan } from '../money.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';
import { HowToCall } from './HowToCall.js';

/**
 * `/console/models` (docs/console.md, "Models page"): how to call the gateway, then every model
 * the member's keys may call with its families, its feature combinations and its current prices
 * in yuan (exact micro-yuan on hover).
 */
export function ModelsPage({ onError }: { onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const models = useLoad(() => callerApi.callableModels(), onError);
  const list = models.value;
  return (
    <section>
      <h1>{t('models.title')}</h1>
      <ErrorLine error={models.error} />
      <HowToCall models={list?.data ?? null} />
      {list !== null && (
        <p className="muted" data-models-basis={list.basis}>
          {t(list.basis === 'keys' ? 'models.basis.keys' : 'models.basis.newKey')}
        </p>
      )}
      <Listed items={list?.data ?? null} empty={t('models.none')} failed={models.error !== null}>
        {(shown) => shown.map((model) => <ModelCard key={model.id} model={model} />)}
      </Listed>
    </section>
  );
}

function ModelCard({ model }: { model: ConsoleModel }) {
  const { t } = useI18n();
  const combinations = model.capabilities.combinations;
  const columns: Column<PriceRow>[] = [
    { id: 'item', header: t('models.item'), cell: (row) => rowLabel(row, t) },
    {
      id: 'price',
      header: t('models.price'),
      number: true,
      cell: (row) => <Yuan micro={row.micro} />,
      cellAttributes: (row) => ({ 'data-micro': String(row.micro) }),
    },
  ];
  return (
    <article className="card model-card" data-model-id={model.id}>
      <h2>
        <code>{model.id}</code>
      </h2>
      <dl className="model-facts">
        <dt>{t('models.families')}</dt>
        <dd>
          {model.capabilities.families.map((family) => t(`models.family.${family}`)).join(', ')}
        </dd>
        {combinations !== undefined && (
          <>
            <dt>{t('models.features')}</dt>
            <dd>
              <ul className="combinations">
                {combinations.map((combination) => (
                  <li key={combination.join('+') || 'none'}>
                    <FeatureCombination features={combination} />
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        <dt>{t('models.priceVersion')}</dt>
        <dd>
          <code>{model.pricing.price_version}</code>
        </dd>
      </dl>
      <DataTable
        rows={priceRows(model)}
        columns={columns}
        rowKey={(row) =>
          [
            row.label,
            ...Object.values(row.values),
            ...Object.values(row.within?.values ?? {}),
          ].join(' ')
        }
        rowAttributes={(row) => ({ 'data-price': row.label })}
        empty="—"
        label={filled(t('models.pricesOf'), { model: model.id })}
      />
    </article>
  );
}

function FeatureCombination({ features }: { features: readonly ChatFeature[] }) {
  const { t } = useI18n();
  if (features.length === 0) return <>{t('models.feature.none')}</>;
  return <>{features.map((feature) => t(`models.feature.${feature}`)).join(' + ')}</>;
}
