import type { Account } from '@tollgate/protocol';
import { useEffect, useState } from 'react';
import { useI18n } from '../i18n.js';
import { operatorApi } from './operator-api.js';

/**
 * An account chosen, never pasted (issue 36, item 5): a search by a part of its email, then one of
 * the matches (the newest accounts before anything is typed). `value` is the chosen account's id
 * (`''`: none, the first option, worded `noneLabel`); an id given from elsewhere (a link's
 * `?account=`) is read once so that its email shows. `name` names the two fields
 * (`<name>-search`, `<name>`). Two labels side by side, with no box of their own: each is an item
 * of the form's layout (a filter bar's too). The search is the picker's own: a new `key` clears it.
 */
export function AccountPicker({
  name,
  label,
  value,
  onChange,
  noneLabel,
  required = false,
  onError,
}: {
  name: string;
  label: string;
  /** The first option's words (`''`); "Choose an account" unless given. */
  noneLabel?: string;
  value: string;
  onChange: (accountId: string) => void;
  required?: boolean;
  onError: (error: unknown) => void;
}) {
  const { t } = useI18n();
  const [search, setSearch] = useState('');
  const [found, setFound] = useState<Account[]>([]);
  const [chosen, setChosen] = useState<Account | null>(null);
  // The accounts whose email holds what is typed, a moment after the last key stroke.
  useEffect(() => {
    let current = true;
    const timer = setTimeout(() => {
      operatorApi.accounts(search.trim()).then(
        (page) => {
          if (current) setFound(page.data);
        },
        (failure: unknown) => {
          if (current) onError(failure);
        },
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [search, onError]);
  // An account chosen elsewhere: its email, once.
  useEffect(() => {
    if (value === '' || chosen?.id === value || found.some((account) => account.id === value))
      return;
    let current = true;
    operatorApi.account(value).then(
      (account) => {
        if (current) setChosen(account);
      },
      (failure: unknown) => {
        if (current) onError(failure);
      },
    );
    return () => {
      current = false;
    };
  }, [value, chosen, found, onError]);
  const accounts =
    chosen === null || found.some((account) => account.id === chosen.id)
      ? found
      : [chosen, ...found];
  return (
    <>
      <label>
        {t('op.pick.find')}
        <input
          name={`${name}-search`}
          type="search"
          autoComplete="off"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
      </label>
      <label>
        {label}
        <select
          name={name}
          required={required}
          value={value}
          onChange={(event) => {
            const accountId = event.target.value;
            setChosen(accounts.find((account) => account.id === accountId) ?? null);
            onChange(accountId);
          }}
        >
          <option value="">{noneLabel ?? t('op.pick.choose')}</option>
          {accounts.map((account) => (
            <option key={account.id} value={account.id}>
              {account.email}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
