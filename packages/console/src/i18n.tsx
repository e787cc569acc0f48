import { createContext, useContext, useMemo, useState, type ReactNode } from 'react';
import { LANGUAGES, messageText, type Language, type MessageKey } from './messages/index.js';

export { LANGUAGES, type Language, type MessageKey };

/**
 * The console's language and its one lookup, `t` (docs/decisions/0011-console.md: a dictionary
 * module, no i18n library). Every page, the caller's and the operator's alike, reads its texts
 * through `useI18n().t` from the one registry of messages/ (packages/console/README.md).
 */
const STORAGE_KEY = 'tollgate.console.language';

/**
 * The remembered choice; else the browser's first preference that we speak (any `zh` is
 * `zh-CN`); else Chinese.
 */
export function initialLanguage(): Language {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === 'zh-CN' || stored === 'en') return stored;
  for (const preference of navigator.languages) {
    const lower = preference.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'zh-CN';
}

interface I18n {
  language: Language;
  setLanguage: (language: Language) => void;
  t: (key: MessageKey) => string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(initialLanguage);
  const value = useMemo<I18n>(
    () => ({
      language,
      setLanguage: (next) => {
        localStorage.setItem(STORAGE_KEY, next);
        document.documentElement.lang = next;
        setLanguageState(next);
      },
      t: (key) => messageText(key, language),
    }),
    [language],
  );
  document.documentElement.lang = language;
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const context = useContext(I18nContext);
  if (context === null) throw new Error('useI18n outside I18nProvider');
  return context;
}
