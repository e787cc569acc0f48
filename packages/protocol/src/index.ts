export * from './errors.js';
export * from './money.js';
