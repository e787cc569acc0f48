import { isErrorCode, type OwnerTask, type TaskOutput } from '@tollgate/protocol';
import { useEffect, useRef, useState } from 'react';
import { ApiFailure } from '../api.js';
import {
  assetContentUrl,
  callerApi,
  newIdempotencyKey,
  statusOf,
  taskKindOf,
} from '../caller-api.js';
import { KeyLabel } from '../components/KeyLabel.js';
import { LineItemName } from '../components/LineItemName.js';
import { Disclosed, PricingRule } from '../components/PricingRule.js';
import { useI18n } from '../i18n.js';
import { When, Yuan } from '../money.js';
import { navigate } from '../router.js';
import { useLoad } from '../useLoad.js';
import { ErrorLine } from './ErrorLine.js';
import { ShareButton } from './ShareButton.js';

/** How often an unfinished task is read again (live progress). */
const POLL_MS = 2_000;
const UNFINISHED = new Set(['queued', 'running']);

/**
 * One task: status (read again every 2 s while it runs), its billing object, the settle button
 * with the exact amount (the spec's exact body; one idempotency key per task, so a retried
 * click settles once), and once delivered the previews and downloads of its outputs.
 */
export function TaskDetailPage({ id, onError }: { id: string; onError: (error: unknown) => void }) {
  const { t } = useI18n();
  const loaded = useLoad(() => callerApi.task(id), onError, [id]);
  const { value: task, setValue: setTask, error, setError, fail, reload: load } = loaded;
  const [shortOfFunds, setShortOfFunds] = useState(false);
  const [busy, setBusy] = useState(false);
  const [justSettled, setJustSettled] = useState(false);
  const settleKey = useRef(newIdempotencyKey());
  const running = task !== null && UNFINISHED.has(task.status);
  useEffect(() => {
    if (!running) return;
    const timer = window.setInterval(load, POLL_MS);
    return () => window.clearInterval(timer);
  }, [running, load]);

  const settle = () => {
    if (task === null) return;
    setBusy(true);
    setError(null);
    setShortOfFunds(false);
    callerApi
      .settleTask(task, settleKey.current)
      .then((settled) => {
        setTask({
          ...settled,
          key_id: task.key_id,
          key_name: task.key_name,
          key_hint: task.key_hint,
        });
        setJustSettled(true);
      })
      .catch((failure: unknown) => {
        if (failure instanceof ApiFailure && failure.code === 'INSUFFICIENT_FUNDS') {
          setShortOfFunds(true);
          onError(failure);
        } else fail(failure);
        // A refusal records nothing: the next click may use a fresh key.
        if (failure instanceof ApiFailure && failure.status < 500)
          settleKey.current = newIdempotencyKey();
      })
      .finally(() => setBusy(false));
  };

  return (
    <section>
      <p>
        <a
          href="/console/tasks"
          onClick={(event) => {
            event.preventDefault();
            navigate('/tasks');
          }}
        >
          ← {t('tasks.back')}
        </a>
      </p>
      <h1>
        {t('tasks.detail')} <code>{id}</code>
      </h1>
      <ErrorLine error={error} />
      {task === null ? (
        error === null && <p>{t('common.loading')}</p>
      ) : (
        <>
          <dl className="facts">
            <dt>{t('tasks.status')}</dt>
            <dd data-task-status={task.status}>{t(`state.${statusOf(task)}`)}</dd>
            <dt>{t('tasks.kind')}</dt>
            <dd data-task-kind={taskKindOf(task)}>{t(`task.kind.${taskKindOf(task)}`)}</dd>
            <dt>{t('tasks.model')}</dt>
            <dd>{task.model}</dd>
            <dt>{t('tasks.key')}</dt>
            <dd>
              <KeyLabel keyId={task.key_id} name={task.key_name} hint={task.key_hint} />
            </dd>
            <dt>{t('tasks.time')}</dt>
            <dd>
              <When iso={task.created_at} />
            </dd>
          </dl>
          {running && (
            <p role="status" className="muted">
              {t('tasks.live')}
            </p>
          )}
          {task.error !== undefined && (
            <div className="error" data-task-error={task.error.code}>
              {t('tasks.failed')}:{' '}
              {t(isErrorCode(task.error.code) ? `error.${task.error.code}` : 'error.other')}{' '}
              <code className="error-code">{task.error.code}</code>
              <Disclosed summary={t('error.detail')} text={task.error.message} />
            </div>
          )}
          <BillingCard task={task} />
          {task.settlement !== undefined && task.billing.actual_amount !== undefined && (
            <div className="card notice" data-settle>
              <p>
                {t('tasks.settleBy')}: <When iso={task.settlement.expires_at} />
              </p>
              <p className="muted">{t('tasks.settleNote')}</p>
              {shortOfFunds && (
                <p role="alert" className="error">
                  {t('tasks.shortOfFunds')}
                </p>
              )}
              <button type="button" disabled={busy} onClick={settle}>
                {t('tasks.settleExact')} <Yuan micro={task.billing.actual_amount} />
              </button>
            </div>
          )}
          {justSettled && (
            <p role="status" className="success">
              {t('tasks.settledOk')}
            </p>
          )}
          {outputsOf(task).length > 0 && (
            <div className="card">
              <h2>{t('tasks.outputs')}</h2>
              <div className="outputs">
                {outputsOf(task).map((output) => (
                  <OutputPreview key={output.asset_id} output={output} />
                ))}
              </div>
              {/* A task's share names its first output (docs/shares.md). */}
              <p className="actions">
                <ShareButton target={{ task_id: task.id }} />
              </p>
            </div>
          )}
        </>
      )}
    </section>
  );
}

function BillingCard({ task }: { task: OwnerTask }) {
  const { t } = useI18n();
  const { billing } = task;
  return (
    <div className="card" data-billing-state={billing.state}>
      <h2>{t('tasks.billing')}</h2>
      <dl className="facts">
        <dt>{t('tasks.billingState')}</dt>
        <dd>{t(`state.${billing.state}`)}</dd>
        <dt>{t('tasks.reserved')}</dt>
        <dd>
          <Yuan micro={billing.reserved_amount} />
        </dd>
        {billing.actual_amount !== undefined && (
          <>
            <dt>{t('tasks.actual')}</dt>
            <dd data-actual-amount={billing.actual_amount}>
              <Yuan micro={billing.actual_amount} />
            </dd>
          </>
        )}
        <dt>{t('tasks.settled')}</dt>
        <dd>
          <Yuan micro={billing.settled_amount} />
        </dd>
        <dt>{t('tasks.priceVersion')}</dt>
        <dd>
          <code>{billing.price_version}</code>
        </dd>
        {billing.pricing_rule !== undefined && (
          <>
            <dt>{t('tasks.rule')}</dt>
            <dd data-pricing-rule>
              <PricingRule
                rule={billing.pricing_rule}
                hasItems={(billing.line_items?.length ?? 0) > 0}
              />
            </dd>
          </>
        )}
      </dl>
      {billing.line_items !== undefined && billing.line_items.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption>{t('tasks.lineItems')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('tasks.lineItem')}</th>
                <th scope="col">{t('tasks.quantity')}</th>
                <th scope="col">{t('tasks.unitPrice')}</th>
                <th scope="col">{t('tasks.amount')}</th>
              </tr>
            </thead>
            <tbody>
              {billing.line_items.map((item, index) => (
                <tr key={index}>
                  <td>
                    <LineItemName name={item.name} detail={item.detail} />
                  </td>
                  <td className="number">{item.quantity}</td>
                  <td className="number">
                    <Yuan micro={item.unit_price} />
                  </td>
                  <td className="number">
                    <Yuan micro={item.amount} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** An image or video task's delivered outputs (an H3 task's video is not shown here). */
function outputsOf(task: OwnerTask): TaskOutput[] {
  return task.object === 'h3.task' ? [] : (task.outputs ?? []);
}

/** An image or a video shown in the page, and a download link for any output. */
function OutputPreview({ output }: { output: TaskOutput }) {
  const { t } = useI18n();
  const url = assetContentUrl(output.asset_id);
  return (
    <figure className="output" data-asset-id={output.asset_id}>
      {output.media_type.startsWith('image/') ? (
        <img src={url} alt={output.asset_id} width={output.width ?? undefined} />
      ) : output.media_type.startsWith('video/') ? (
        <video src={url} controls preload="metadata" aria-label={output.asset_id} />
      ) : null}
      <figcaption>
        <code>{output.media_type}</code> ·{' '}
        <a href={url} download>
          {t('tasks.download')}
        </a>
      </figcaption>
    </figure>
  );
}
