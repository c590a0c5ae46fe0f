/** A tool's result in its row, shown by the display kind its tool declared (`tool_call_end.display`). */

import type { ToolItem } from '../src/shared/viewModel';
import { clip, diffPre, h, inline, markdown, pre } from './dom';

/** JSON text indented by two, or undefined when it is not JSON (a result cut short). */
function prettyJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/** `  L:C: text` under a file's line: 1-based line and column (a semantic tool's place). */
const PLACE = /^ {2}(\d+):(\d+):(?: (.*))?$/;
const LEFT_OUT = /^\(\d+ more left out\)$/;

/**
 * A semantic tool's places (find_definition, find_references, symbols,
 * rename_symbol): the first line a header; then per file a line holding its
 * path, under it `  L:C: text` lines, each a link that opens the file there
 * (the host's openFile, 0-based); a last `(N more left out)` line as it is.
 */
function locations(content: string): HTMLElement {
  const root = h('div', { class: 'result result-locations' });
  const [header = '', ...lines] = clip(content).split('\n');
  root.append(inline(header, 'loc-header'));
  let file: string | undefined;
  for (const line of lines) {
    const place = PLACE.exec(line);
    if (place && file !== undefined) {
      const [, row = '1', column = '1', text = ''] = place;
      root.append(
        h(
          'div',
          { class: 'loc-place' },
          h('a', { class: 'location', 'data-path': file, 'data-line': String(Number(row) - 1), 'data-char': String(Number(column) - 1) }, `${row}:${column}`),
          h('span', { class: 'loc-text' }, text),
        ),
      );
    } else if (LEFT_OUT.test(line)) {
      root.append(h('div', { class: 'loc-more' }, line));
    } else if (line.trim() && !/^\s/.test(line)) {
      file = line.trim();
      root.append(h('div', { class: 'loc-file' }, h('a', { class: 'location', 'data-path': file }, file)));
    } else if (line.trim()) {
      root.append(h('div', { class: 'loc-line' }, line));
    }
  }
  return root;
}

/**
 * Markdown rendered, a diff with its added and removed lines coloured, a
 * table (a markdown pipe table) as a table, JSON pretty-printed, places in
 * files as links to them; a failed
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
    case 'locations':
      return locations(content);
    case 'json': {
      const json = prettyJson(content);
      return json === undefined ? pre(content, 'result') : pre(json, 'result result-json');
    }
    default:
      return /^@@ .* @@/m.test(content) ? diffPre(content, 'result') : pre(content, 'result');
  }
}
