/**
 * The cost line of the panel's header: tokens in and out (cache reads said),
 * the share of the context window in use and the cost when the model's price
 * is known, as the server's `$/progress` message says it:
 * "12.3k in (4.1k cached) / 1.1k out · 34% of context · $0.04".
 * And whether a run ended on its budget (the panel then offers Continue).
 * Each of the line's parts is a whole phrase in the panel's language (the
 * parts are a list, joined by " · "). Pure.
 */

import * as l10n from '@vscode/l10n';
import type { ContextShare } from '../shared/events.generated';
import type { RunStatus, Usage } from '../shared/protocol';

/** The follow-up prompt of the Continue offer after a budget stop. */
export const CONTINUE_PROMPT = 'continue';

/** 950, 12.3k, 1.2M. */
export function formatTokenCount(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return `${(n / 1000).toFixed(1)}k`;
  }
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** USD with cents, or four decimals below a cent. */
export function formatCost(usd: number): string {
  return usd >= 0.01 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** The line; '' when nothing was spent and the context is unknown. */
export function costLine(usage: Usage, context: ContextShare | null | undefined, cost: number | null | undefined): string {
  const cached = usage.cache_read_tokens ?? 0;
  const tokensIn = (usage.input_tokens ?? 0) + cached + (usage.cache_write_tokens ?? 0);
  const tokensOut = usage.output_tokens ?? 0;
  const parts: string[] = [];
  if (tokensIn || tokensOut) {
    parts.push(
      cached
        ? l10n.t('{0} in ({1} cached) / {2} out', formatTokenCount(tokensIn), formatTokenCount(cached), formatTokenCount(tokensOut))
        : l10n.t('{0} in / {1} out', formatTokenCount(tokensIn), formatTokenCount(tokensOut)),
    );
  }
  if (context) {
    parts.push(l10n.t('{0}% of context', Math.round(context.share * 100)));
  }
  if (typeof cost === 'number') {
    parts.push(formatCost(cost));
  }
  return parts.join(' · ');
}

/** The run ended because it went over `harness.maxTokensPerRun` or `harness.maxCostPerRun`. */
export function isBudgetStop(status: RunStatus, reason: string | null | undefined): boolean {
  return status === 'failed' && typeof reason === 'string' && reason.startsWith('budget:');
}
