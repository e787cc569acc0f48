import type { H3Task } from '@tollgate/protocol';
import type { AssetMediaType } from '../assets/probe.js';
import { actualH3Understand, actualH3Video, type H3Pricing } from '../billing/h3-pricing.js';
import type { ActualAmount } from '../billing/actual-amount.js';
import type { ModelPrices } from '../config/schema.js';
import type { DeliveryReport } from '../providers/task-provider.js';
import { secondsStored } from '../tasks/task-outputs.js';
import { storedInputOf, type TaskFamily } from '../tasks/task-family.js';
import type { TaskRow } from '../tasks/task-store.js';
import { h3StoredInputSchema, type H3StoredInput } from './h3-stored-input.js';
import { h3UpstreamInput } from './h3-upstream-input.js';
import { h3TaskPath, h3TaskView } from './h3-view.js';

const VIDEO_TYPES: readonly AssetMediaType[] = ['video/mp4'];

/**
 * H3 tasks (spec 4.4; docs/h3.md): video actions billed on the delivered seconds plus the
 * measured input, `understand` on the tokens the upstream reports.
 */
export const h3Family: TaskFamily<H3StoredInput> = {
  kind: 'h3',
  attachable: true,
  path: h3TaskPath,
  parseInput: (stored) => h3StoredInputSchema.parse(stored),
  provider: (providers, upstream, caller) => providers.tasks(upstream, 'h3', caller),
  upstreamInput: (deps, task, input) => h3UpstreamInput(deps, task, input),
  outputRules: (deps) => ({ maxBytes: deps.maxVideoBytes, mediaTypes: VIDEO_TYPES }),
  deliveredReport: secondsStored,
  priceDelivery: (prices, input, report) => priceH3(prices, input.pricing, report, false),
  priceBilledFailure: (prices, input, report) => priceH3(prices, input.pricing, report, true),
  view: (row) => h3View(row),
};

/** An H3 task's view, its stored input parsed with the schema that wrote it. */
export const h3View = (row: TaskRow): H3Task => h3TaskView(row, storedInputOf(h3Family, row));

/**
 * Video actions on the delivered (or billed) output seconds plus the measured input; an
 * `understand` on the tokens the upstream reports. A finished `understand` without a token
 * report is never billed on a guess: this throws, and the worker reads the task again later.
 */
function priceH3(
  prices: ModelPrices,
  pricing: H3Pricing,
  report: DeliveryReport,
  billedFailure: boolean,
): ActualAmount {
  if (pricing.action !== 'understand')
    return actualH3Video(prices, pricing, {
      outputMs: report.secondsDelivered * 1000,
      billedFailure,
    });
  if (report.tokens === undefined)
    throw new Error('the upstream reported no token usage for an understand task');
  return actualH3Understand(prices, pricing, report.tokens);
}
