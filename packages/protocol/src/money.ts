/** RMB micro-yuan: 1 000 000 = 1 yuan. Every amount on the wire is a safe integer of this unit. */
export const CURRENCY = 'CNY_MICRO';
export const MICRO_YUAN_PER_YUAN = 1_000_000;
