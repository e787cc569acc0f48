import { useCallback, useState } from 'react';

/**
 * A text typed on each row of a table (a reason, a note), kept per row id: `text(id)` reads it,
 * `clear(id)` empties it after its action succeeded, `input(id, …)` is the row's labelled input.
 */
export function useRowTexts() {
  const [texts, setTexts] = useState<Readonly<Record<string, string>>>({});
  const write = useCallback(
    (id: string, value: string) => setTexts((given) => ({ ...given, [id]: value })),
    [],
  );
  return {
    text: (id: string) => texts[id] ?? '',
    clear: (id: string) => write(id, ''),
    input: (
      id: string,
      field: { name: string; label: string; maxLength: number; required?: boolean },
    ) => (
      <input
        name={`${field.name}-${id}`}
        aria-label={`${field.label}: ${id}`}
        maxLength={field.maxLength}
        required={field.required}
        value={texts[id] ?? ''}
        onChange={(event) => write(id, event.target.value)}
      />
    ),
  };
}
