import type { NamedOperatorRecord, NamedOperatorTask, UnresolvedTotals } from '@tollgate/protocol';
import { useState, type FormEvent } from 'react';
import { taskKindOf } from '../caller-api.js';
import { Field } from '../components/Field.js';
import { KeyLabel } from '../components/KeyLabel.js';
import { useI18n } from '../i18n.js';
import { submittedAmount, When, Yuan, YuanField } from '../money.js';
import { AMOUNT_RULES } from '../money-text.js';
import { ErrorLine } from '../pages/ErrorLine.js';
import { useLoad } from '../useLoad.js';
import { operatorApi } from './operator-api.js';

type OnError = (error: unknown) => void;

/**
 * Records and tasks whose outcome was never confirmed (`submission_unknown`): an operator
 * captures an amount (the work was done) or releases the hold, always with a reason.
 */
export function ResolvePage({ onError }: { onError: OnError }) {
  const { t } = useI18n();
  const records = useLoad(() => operatorApi.unresolvedRecords(), onError);
  const tasks = useLoad(() => operatorApi.unresolvedTasks(), onError);
  const queue = useLoad(() => operatorApi.unresolved(), onError);
  const recordDone = () => {
    records.reload();
    queue.reload();
  };
  const taskDone = () => {
    tasks.reload();
    queue.reload();
  };
  return (
    <section>
      <h1>{t('op.resolve')}</h1>
      <ErrorLine error={records.error ?? tasks.error ?? queue.error} />
      {queue.value !== null && (
        <div className="table-wrap totals-wrap">
          <table className="totals" data-unresolved-totals>
            <tbody>
              <TotalsRow label={t('op.records')} totals={queue.value.requests} />
              <TotalsRow label={t('op.tasks')} totals={queue.value.tasks} />
              <TotalsRow label={t('op.total')} totals={queue.value.total} />
            </tbody>
          </table>
        </div>
      )}
      <h2>{t('op.records')}</h2>
      {records.value !== null && records.value.data.length === 0 && <p>{t('op.none')}</p>}
      {records.value?.data.map((record) => (
        <RecordForm key={record.id} record={record} onDone={recordDone} onError={records.fail} />
      ))}
      <h2>{t('op.tasks')}</h2>
      {tasks.value !== null && tasks.value.data.length === 0 && <p>{t('op.none')}</p>}
      {tasks.value?.data.map((task) => (
        <TaskForm key={task.id} task={task} onDone={taskDone} onError={tasks.fail} />
      ))}
    </section>
  );
}

/** How many, the money they hold, and since when: what grows when nothing resolves them. */
function TotalsRow({ label, totals }: { label: string; totals: UnresolvedTotals }) {
  const { t } = useI18n();
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{totals.count}</td>
      <td>
        {t('op.held')} <Yuan micro={totals.held} />
      </td>
      <td>
        {t('op.oldest')}{' '}
        {totals.oldest_created_at === null ? '—' : <When iso={totals.oldest_created_at} />}
      </td>
    </tr>
  );
}

function RecordForm({
  record,
  onDone,
  onError,
}: {
  record: NamedOperatorRecord;
  onDone: () => void;
  onError: OnError;
}) {
  const { t } = useI18n();
  const [action, setAction] = useState<'capture' | 'release'>('release');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const amountName = 'resolve-amount';
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (action === 'release') {
      operatorApi
        .resolveRecord(record.id, { action, reason: reason.trim() })
        .then(onDone)
        .catch(onError);
      return;
    }
    const micro = submittedAmount(event, amountName, amount, AMOUNT_RULES.movement);
    if (micro === null) return;
    operatorApi
      .resolveRecord(record.id, { action, amount: micro, reason: reason.trim() })
      .then(onDone)
      .catch(onError);
  };
  return (
    <form className="card" data-record-id={record.id} onSubmit={submit}>
      <p>
        <code>{record.id}</code> · {record.model ?? '—'} ·{' '}
        <span data-account-id={record.account_id}>
          {record.account_email ?? <code>{record.account_id}</code>}
        </span>{' '}
        · <KeyLabel keyId={record.key_id} name={record.key_name} hint={record.key_hint} /> ·{' '}
        <When iso={record.created_at} />
        {typeof record.reserve?.amount === 'number' && (
          <>
            {' · '}
            {t('op.held')} <Yuan micro={record.reserve.amount} />
          </>
        )}
      </p>
      <fieldset>
        <legend>{t('op.action')}</legend>
        {(['release', 'capture'] as const).map((choice) => (
          <label key={choice} className="choice">
            <input
              type="radio"
              name={`action-${record.id}`}
              value={choice}
              checked={action === choice}
              onChange={() => setAction(choice)}
            />
            {t(choice === 'capture' ? 'op.capture' : 'op.release')}
          </label>
        ))}
      </fieldset>
      {action === 'capture' && (
        <YuanField
          label={t('op.captureYuan')}
          name={amountName}
          rule={AMOUNT_RULES.movement}
          value={amount}
          onValue={setAmount}
        />
      )}
      <ReasonField name="resolve-reason" value={reason} onValue={setReason} />
      <button type="submit">{t('op.submit')}</button>
    </form>
  );
}

function TaskForm({
  task,
  onDone,
  onError,
}: {
  task: NamedOperatorTask;
  onDone: () => void;
  onError: OnError;
}) {
  const { t } = useI18n();
  const [reason, setReason] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    operatorApi.resolveTask(task.id, reason.trim()).then(onDone).catch(onError);
  };
  return (
    <form className="card" data-task-id={task.id} onSubmit={submit}>
      <p>
        <code>{task.id}</code> · {t(`task.kind.${taskKindOf(task)}`)} · {task.model} ·{' '}
        <span data-account-id={task.account_id}>
          {task.account_email ?? <code>{task.account_id}</code>}
        </span>{' '}
        · <KeyLabel keyId={task.key_id} name={task.key_name} hint={task.key_hint} />
      </p>
      <ReasonField name="task-reason" value={reason} onValue={setReason} />
      <button type="submit">{t('op.release')}</button>
    </form>
  );
}

/** Why the operator resolves it, kept with the resolution: required, at most 1,000 characters. */
function ReasonField(props: { name: string; value: string; onValue: (value: string) => void }) {
  const { t } = useI18n();
  return <Field {...props} label={t('op.reasonRequired')} required maxLength={1000} />;
}
