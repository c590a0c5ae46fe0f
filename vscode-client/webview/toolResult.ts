/** A tool's result in its row, shown by the display kind its tool declared (`tool_call_end.display`). */

import type { ToolItem } from '../src/shared/viewModel';
import { diffPre, markdown, pre } from './dom';

/** JSON text indented by two, or undefined when it is not JSON (a result cut short). */
function prettyJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/**
 * Markdown rendered, a diff with its added and removed lines coloured, a
 * table (a markdown pipe table) as a table, JSON pretty-printed; a failed
 * call's error and a tool that declares no kind: text (a diff when it looks
 * like one, as before).
 */
export function toolResult(item: ToolItem, content: string): HTMLElement {
  const display = item.status === 'error' ? undefined : item.display;
  switch (display) {
    case 'markdown':
      return markdown(content, 'md result result-markdown');
    case 'table':
      return markdown(content, 'md result result-table');
    case 'diff':
      return diffPre(content, 'result result-diff');
    case 'json': {
      const json = prettyJson(content);
      return json === undefined ? pre(content, 'result') : pre(json, 'result result-json');
    }
    default:
      return /^@@ .* @@/m.test(content) ? diffPre(content, 'result') : pre(content, 'result');
  }
}
