/** Small DOM helpers of the panel: elements from text (never from HTML strings), icons, code blocks. */

import * as l10n from '@vscode/l10n';
import { renderInline, renderMarkdown } from '../src/shared/markdown';
export { usageText } from '../src/shared/viewModel';
import { ICONS, type IconName } from './icons';

const MAX_SHOWN_CHARS = 6000;

export type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined) {
      el.setAttribute(name, value);
    }
  }
  append(el, ...children);
  return el;
}

export function append(el: HTMLElement, ...children: Child[]): void {
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) {
      el.append(child);
    }
  }
}

export function icon(name: IconName, cls = ''): HTMLSpanElement {
  const span = h('span', { class: `icon icon-${name} ${cls}`.trim(), 'aria-hidden': 'true' });
  span.innerHTML = ICONS[name];
  return span;
}

export function markdown(text: string, cls = 'md'): HTMLDivElement {
  const div = h('div', { class: cls });
  div.innerHTML = renderMarkdown(text);
  return div;
}

/** One line of inline Markdown (code spans, emphasis, links): notices and banners show `x` as code, not backticks. */
export function inline(text: string, cls = ''): HTMLSpanElement {
  const span = h('span', cls ? { class: cls } : {});
  span.innerHTML = renderInline(text);
  return span;
}

export function clip(text: string, max = MAX_SHOWN_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}\n${l10n.t('… ({0} more characters)', (text.length - max).toLocaleString('en-US'))}` : text;
}

export function pre(text: string, cls = ''): HTMLPreElement {
  return h('pre', { class: cls || undefined }, clip(text));
}

/** A pre whose unified-diff lines are coloured (edit results carry a diff). */
export function diffPre(text: string, cls: string): HTMLPreElement {
  const el = h('pre', { class: cls });
  for (const line of clip(text).split('\n')) {
    const kind = line.startsWith('+++') || line.startsWith('---')
      ? ''
      : line.startsWith('+')
        ? 'diff-add'
        : line.startsWith('-')
          ? 'diff-del'
          : line.startsWith('@@')
            ? 'diff-hunk'
            : '';
    el.append(kind ? h('span', { class: kind }, line) : line, '\n');
  }
  return el;
}

export function severityName(severity: number | null | undefined): string {
  return ['', 'error', 'warning', 'info', 'hint'][severity ?? 1] ?? 'error';
}
