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

/**
 * `  L:C: text` under a file's line: 1-based line and 1-based column counted
 * in UTF-16 code units (the server's locations format), so `column - 1` is
 * the 0-based character a vscode.Position takes.
 */
const PLACE = /^ {2}(\d+):(\d+):(?: (.*))?$/;

/**
 * A semantic tool's places (find_definition, find_references, symbols,
 * rename_symbol): the first line a header; then per file a line holding its
 * path, under it `  L:C: text` lines, each a link that opens the file there
 * (the host's openFile, 0-based); a last line in parentheses is the
 * trailer, shown as it is (`(3 more left out)`, `(generations 1-2)`, `(the
 * server may not have indexed the project yet)`, or several joined by `; `),
 * as the server's parse_locations reads it.
 */
function locations(content: string): HTMLElement {
  const root = h('div', { class: 'result result-locations' });
  const [header = '', ...lines] = clip(content).replace(/\n+$/, '').split('\n');
  root.append(inline(header, 'loc-header'));
  const last = lines.at(-1) ?? '';
  const trailer = last.startsWith('(') && last.endsWith(')') ? lines.pop() : undefined;
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
    } else if (line.trim() && !/^\s/.test(line)) {
      file = line.trim();
      root.append(h('div', { class: 'loc-file' }, h('a', { class: 'location', 'data-path': file }, file)));
    } else if (line.trim()) {
      root.append(h('div', { class: 'loc-line' }, line));
    }
  }
  if (trailer !== undefined) {
    root.append(h('div', { class: 'loc-more' }, trailer));
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
