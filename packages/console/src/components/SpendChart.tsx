import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { useEffect, useRef } from 'react';
import { MICRO_YUAN_PER_YUAN, type AccountUsage } from '@tollgate/protocol';
import { useI18n } from '../i18n.js';
import { microYuanFigure, yuanText } from '../money-text.js';

// Only the pieces drawn here, so the bundle carries no other chart type (docs/decisions/0014).
Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Legend,
  Tooltip,
);

/** Colour-blind-safe (Okabe–Ito), repeated past eight models. */
const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#000000',
];

/**
 * A yuan axis's ticks as every amount is shown (two decimals, `yuanText`): steps of whole fen
 * (`precision`), each tick's yuan taken back to micro-yuan for the one formatter.
 */
const YUAN_TICKS = {
  precision: 2,
  callback: (value: string | number) => yuanText(Math.round(Number(value) * MICRO_YUAN_PER_YUAN)),
};

/** Every UTC day from `from` to `to`, both included: a day with no spend is a gap of 0. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (
    let day = Date.parse(`${from}T00:00:00Z`);
    day <= Date.parse(`${to}T00:00:00Z`);
    day += 86_400_000
  )
    days.push(new Date(day).toISOString().slice(0, 10));
  return days;
}

/**
 * Spend per day, stacked by model (bars, yuan), and the charges per day (a line, right axis),
 * drawn on a canvas by Chart.js. The canvas is an image to assistive technology (`role="img"`
 * with a label pointing at the table the page shows beside it, which has every figure). The
 * bars' heights are yuan as floating point, for drawing only: the tooltips show each amount as
 * every figure is shown (`yuanText` of the integer micro-yuan) followed by its exact micro-yuan,
 * since a canvas has no hover title.
 */
export function SpendChart({
  usage,
  label,
  requestsLabel,
}: {
  usage: AccountUsage;
  label: string;
  requestsLabel: string;
}) {
  const { t } = useI18n();
  const unit = t('common.microYuan');
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (canvas.current === null) return;
    const days = daysOf(usage.from, usage.to);
    const models = [...new Set(usage.data.map((row) => row.model))].sort();
    const micro = new Map(usage.data.map((row) => [`${row.date} ${row.model}`, row.amount]));
    const requests = days.map((day) =>
      usage.data.filter((row) => row.date === day).reduce((sum, row) => sum + row.requests, 0),
    );
    const chart = new Chart(canvas.current, {
      data: {
        labels: days.map((day) => day.slice(5)),
        datasets: [
          ...models.map((model, index) => ({
            type: 'bar' as const,
            label: model,
            data: days.map((day) => (micro.get(`${day} ${model}`) ?? 0) / MICRO_YUAN_PER_YUAN),
            backgroundColor: PALETTE[index % PALETTE.length],
            stack: 'spend',
            yAxisID: 'y',
          })),
          {
            type: 'line' as const,
            label: requestsLabel,
            data: requests,
            borderColor: '#5a6474',
            backgroundColor: '#5a6474',
            pointRadius: 2,
            yAxisID: 'requests',
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: { stacked: true },
          y: { stacked: true, beginAtZero: true, ticks: YUAN_TICKS },
          requests: {
            position: 'right',
            beginAtZero: true,
            grid: { drawOnChartArea: false },
            ticks: { precision: 0 },
          },
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: (item) => {
                const dataset = item.dataset;
                if (dataset.type === 'line') return `${requestsLabel}: ${String(item.raw)}`;
                const day = days[item.dataIndex] ?? '';
                const amount = micro.get(`${day} ${dataset.label ?? ''}`) ?? 0;
                return `${dataset.label ?? ''}: ${yuanText(amount)} (${microYuanFigure(amount)} ${unit})`;
              },
            },
          },
        },
      },
    });
    return () => chart.destroy();
  }, [usage, requestsLabel, unit]);
  return (
    <div className="chart-box">
      <canvas ref={canvas} role="img" aria-label={label} data-spend-chart />
    </div>
  );
}

/** One bar of the per-key chart: the key's label (its name, as KeyLabel words it) and spend. */
export interface KeyBar {
  readonly label: string;
  readonly micro: number;
}

/**
 * Spend per key over the keys page's 30 UTC days (issue 36, item 5): one horizontal bar per key,
 * named as people know the key, drawn by Chart.js like the overview's chart (an image to
 * assistive technology; the keys table beside it has every figure). Tooltips show the amount as
 * every figure is shown, with its exact micro-yuan.
 */
export function KeySpendChart({ bars, label }: { bars: readonly KeyBar[]; label: string }) {
  const { t } = useI18n();
  const unit = t('common.microYuan');
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (canvas.current === null) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: bars.map((bar) => bar.label),
        datasets: [
          {
            label: '¥',
            data: bars.map((bar) => bar.micro / MICRO_YUAN_PER_YUAN),
            backgroundColor: PALETTE[0],
          },
        ],
      },
      options: {
        indexAxis: 'y',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { beginAtZero: true, ticks: YUAN_TICKS } },
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (item) => {
                const micro = bars[item.dataIndex]?.micro ?? 0;
                return `${yuanText(micro)} (${microYuanFigure(micro)} ${unit})`;
              },
            },
          },
        },
      },
    });
    return () => chart.destroy();
  }, [bars, unit]);
  return (
    <div className="chart-box key-chart-box" data-bars={bars.length}>
      <canvas ref={canvas} role="img" aria-label={label} data-key-spend-chart />
    </div>
  );
}
