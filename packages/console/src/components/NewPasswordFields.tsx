import type { ReactNode } from 'react';
import { Field } from './Field.js';

/** What every new-password input is: typed twice, at least the server's 10 characters. */
const NEW_PASSWORD = {
  type: 'password',
  autoComplete: 'new-password',
  minLength: 10,
  required: true,
} as const;

/**
 * A new password and its confirmation (invitation, sign-up, password change): the same two
 * inputs everywhere, named by the form that holds them.
 */
export function NewPasswordFields({
  names,
  labels,
  password,
  confirm,
  onPassword,
  onConfirm,
}: {
  names: readonly [password: string, confirm: string];
  labels: readonly [password: ReactNode, confirm: ReactNode];
  password: string;
  confirm: string;
  onPassword: (value: string) => void;
  onConfirm: (value: string) => void;
}) {
  return (
    <>
      <Field
        {...NEW_PASSWORD}
        label={labels[0]}
        name={names[0]}
        value={password}
        onValue={onPassword}
      />
      <Field
        {...NEW_PASSWORD}
        label={labels[1]}
        name={names[1]}
        value={confirm}
        onValue={onConfirm}
      />
    </>
  );
}
