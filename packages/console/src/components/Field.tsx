import type { InputHTMLAttributes, ReactNode } from 'react';

/**
 * A labelled input: the label wraps it (so a click on the text focuses it and screen readers
 * name it), `onValue` receives the typed text.
 */
export function Field({
  label,
  onValue,
  ...input
}: Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange'> & {
  label: ReactNode;
  onValue: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <input {...input} onChange={(event) => onValue(event.target.value)} />
    </label>
  );
}

/**
 * The e-mail a console user signs in with (sign-in, sign-up): an e-mail input the browser fills
 * with the address it saved for this site (`autoComplete="username"`).
 */
export function EmailField(props: {
  label: ReactNode;
  name: string;
  value: string;
  onValue: (value: string) => void;
}) {
  return <Field {...props} type="email" autoComplete="username" required />;
}

/**
 * The end of a form: what was wrong with the input (an alert), what the last submit did (a
 * status), and the submit button.
 */
export function SubmitRow({
  label,
  invalid,
  done,
}: {
  label: ReactNode;
  invalid?: ReactNode;
  done?: ReactNode;
}) {
  return (
    <>
      {invalid !== undefined && invalid !== false && invalid !== null && (
        <p role="alert" className="error">
          {invalid}
        </p>
      )}
      {done !== undefined && done !== false && done !== null && (
        <p role="status" className="success">
          {done}
        </p>
      )}
      <button type="submit">{label}</button>
    </>
  );
}
