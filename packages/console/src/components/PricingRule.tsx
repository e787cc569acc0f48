import { useI18n } from '../i18n.js';
import { ruleKind, ruleMessages } from '../pricing-rule.js';

/**
 * A bill's pricing rule in the viewer's language: what kind of rule priced it (pricing-rule.ts),
 * with the gateway's own sentence and its numbers behind a disclosure (English, as the gateway
 * writes it). `hasItems`: the bill has line items, which the page shows beside it.
 */
export function PricingRule({ rule, hasItems }: { rule: string; hasItems: boolean }) {
  const { t } = useI18n();
  return (
    <span className="pricing-rule" data-rule-kind={ruleKind(rule, hasItems)}>
      {ruleMessages(rule, hasItems)
        .map((key) => t(key))
        .join(' ')}
      <Disclosed summary={t('rule.computation')} text={rule} />
    </span>
  );
}

/**
 * A text of the gateway's own, in English (a journal entry's reason, a flag, an upstream's
 * detail): as it is to an English reader, else behind a disclosure whose summary is in the
 * viewer's language.
 */
export function GatewayText({ summary, text }: { summary: string; text: string }) {
  const { language } = useI18n();
  if (language === 'en') return <span className="gateway-text">{text}</span>;
  return <Disclosed summary={summary} text={text} />;
}

/** A text of the gateway's own, in English, behind a disclosure (`summary`: what it is). */
export function Disclosed({ summary, text }: { summary: string; text: string }) {
  return (
    <details className="disclosed">
      <summary>{summary}</summary>
      <code lang="en">{text}</code>
    </details>
  );
}
