/** The console's two languages (docs/decisions/0011-console.md: no i18n library). */
export type Language = 'zh-CN' | 'en';

export const LANGUAGES: readonly Language[] = ['zh-CN', 'en'];

/**
 * The one shape of every message file: a key (`<page or domain>.<what>`, operator pages `op.*`)
 * and its text in each language, side by side, so that a message without one of them does not
 * type-check (`satisfies MessageTable`, which also refuses a third field).
 */
export type MessageTable = Readonly<Record<string, Readonly<Record<Language, string>>>>;
