import type { z } from 'zod';

/**
 * An admin route's body schema, made of the operator input schema the route parses
 * (operator/operator-inputs.ts): a JSON object that may carry that input's fields and no other,
 * so an unknown field (a typo such as `ammount`) is a 400 naming `body.<field>`, as on `/v1`,
 * before anything runs. What each field must be is the input's own rule, checked when the route
 * parses it, so this says nothing about it. `absent`: the body may be left out (validated as
 * `null`); the route parses it as `{}`.
 */
export function adminBodyOf(input: z.ZodObject, { absent = false } = {}) {
  return {
    type: absent ? ['object', 'null'] : 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.keys(input.shape).map((field) => [field, {}])),
  } as const;
}
