/** The two stores (store/database.ts); below every store file, so any of them may name it. */
export type DialectName = 'sqlite' | 'postgres';
