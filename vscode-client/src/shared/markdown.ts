/**
 * A small, safe Markdown renderer for the chat panel.
 *
 * Safety comes from the order of work: every piece of the input is HTML-
 * escaped before any markup is added, and the only markup added is the fixed
 * set of tags below. Raw HTML in the input is shown as text. Links never get
 * an `href` (the webview would navigate): they carry `data-href` (http, https
 * and mailto URLs) or `data-path` (a workspace path) and the panel's click
 * handler asks the extension to open them. Nothing remote is ever loaded:
 * images are rendered as links.
 *
 * Supported: paragraphs with line breaks, ATX headings, fenced code blocks
 * (also unterminated ones, as while streaming), inline code, bold, italic,
 * strikethrough, links, autolinks, block quotes, ordered and bullet lists
 * (nested by indentation), GFM tables and horizontal rules.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
/** Marks stashed HTML; a private-use character, removed from the input first. */
const PLACEHOLDER = /\uE000(\d+)\uE000/g;

/** Renders Markdown to an HTML string that is safe to assign to innerHTML. */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\uE000/g, '').replace(/\r\n?/g, '\n').split('\n');
  return renderBlocks(lines, 0);
}

function renderBlocks(lines: string[], depth: number): string {
  if (depth > 8) {
    return `<p>${escapeHtml(lines.join('\n'))}</p>`;
  }
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    if (!line.trim()) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? '```';
      const lang = fence[2] ?? '';
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] ?? '').trimStart().startsWith(marker)) {
        body.push(lines[i] ?? '');
        i++;
      }
      i++; // the closing fence (or past the end while streaming)
      const cls = lang ? ` class="language-${escapeHtml(lang)}"` : '';
      out.push(`<pre><code${cls}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = Math.min(6, (heading[1] ?? '#').length);
      out.push(`<h${level}>${renderInline(heading[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] ?? '')) {
        body.push(QUOTE.exec(lines[i] ?? '')?.[1] ?? '');
        i++;
      }
      out.push(`<blockquote>${renderBlocks(body, depth + 1)}</blockquote>`);
      continue;
    }
    if (LIST_ITEM.test(line)) {
      i = renderList(lines, i, depth, out);
      continue;
    }
    if (line.includes('|') && TABLE_SEPARATOR.test(lines[i + 1] ?? '') && (lines[i + 1] ?? '').includes('-')) {
      i = renderTable(lines, i, out);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length) {
      const next = lines[i] ?? '';
      if (!next.trim() || FENCE.test(next) || HEADING.test(next) || QUOTE.test(next) || RULE.test(next)) {
        break;
      }
      if (para.length > 0 && LIST_ITEM.test(next)) {
        break;
      }
      para.push(next.trim());
      i++;
    }
    out.push(`<p>${para.map(renderInline).join('<br>')}</p>`);
  }
  return out.join('');
}

function renderList(lines: string[], start: number, depth: number, out: string[]): number {
  const first = LIST_ITEM.exec(lines[start] ?? '');
  const indent = (first?.[1] ?? '').length;
  const ordered = /\d/.test(first?.[2] ?? '');
  const startNumber = ordered ? Number.parseInt(first?.[2] ?? '1', 10) : 1;
  const items: string[][] = [];
  let i = start;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const match = LIST_ITEM.exec(line);
    if (match && (match[1] ?? '').length === indent && /\d/.test(match[2] ?? '') === ordered) {
      items.push([match[3] ?? '']);
      i++;
      continue;
    }
    const current = items[items.length - 1];
    if (!current) {
      break;
    }
    if (!line.trim()) {
      // A blank line continues the list only if an indented line follows.
      const next = lines[i + 1] ?? '';
      const nextIndent = next.length - next.trimStart().length;
      if (next.trim() && nextIndent > indent) {
        current.push('');
        i++;
        continue;
      }
      break;
    }
    const lineIndent = line.length - line.trimStart().length;
    if (lineIndent > indent) {
      current.push(line.slice(Math.min(lineIndent, indent + 4)));
      i++;
      continue;
    }
    if (match) {
      break; // a list of the other kind or a shallower level
    }
    // Lazy continuation of the item's paragraph.
    current.push(line.trim());
    i++;
  }
  const tag = ordered ? 'ol' : 'ul';
  const startAttr = ordered && startNumber !== 1 ? ` start="${startNumber}"` : '';
  const body = items
    .map((item) => {
      const [head = '', ...rest] = item;
      const nestedStart = rest.findIndex((l) => LIST_ITEM.test(l) || FENCE.test(l) || !l.trim());
      const lazy = nestedStart === -1 ? rest : rest.slice(0, nestedStart);
      const nested = nestedStart === -1 ? [] : rest.slice(nestedStart);
      const text = [head, ...lazy].map(renderInline).join('<br>');
      return `<li>${text}${nested.length ? renderBlocks(nested, depth + 1) : ''}</li>`;
    })
    .join('');
  out.push(`<${tag}${startAttr}>${body}</${tag}>`);
  return i;
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith('|')) {
    row = row.slice(1);
  }
  if (row.endsWith('|') && !row.endsWith('\\|')) {
    row = row.slice(0, -1);
  }
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

function renderTable(lines: string[], start: number, out: string[]): number {
  const header = splitRow(lines[start] ?? '');
  const aligns = splitRow(lines[start + 1] ?? '').map((cell) => {
    const left = cell.startsWith(':');
    const right = cell.endsWith(':');
    return left && right ? 'center' : right ? 'right' : left ? 'left' : '';
  });
  const cell = (tag: string, text: string, index: number): string => {
    const align = aligns[index] ? ` class="align-${aligns[index]}"` : '';
    return `<${tag}${align}>${renderInline(text)}</${tag}>`;
  };
  let i = start + 2;
  const rows: string[] = [];
  while (i < lines.length && (lines[i] ?? '').includes('|') && (lines[i] ?? '').trim()) {
    const cells = splitRow(lines[i] ?? '');
    rows.push(`<tr>${header.map((_, n) => cell('td', cells[n] ?? '', n)).join('')}</tr>`);
    i++;
  }
  const head = `<thead><tr>${header.map((h, n) => cell('th', h, n)).join('')}</tr></thead>`;
  out.push(`<table>${head}<tbody>${rows.join('')}</tbody></table>`);
  return i;
}

/** http(s)/mailto URLs become data-href, anything without a scheme data-path. */
function linkHtml(label: string, rawUrl: string): string {
  const url = rawUrl.trim();
  if (/^(https?:\/\/|mailto:)/i.test(url)) {
    return `<a class="md-link" data-href="${escapeHtml(url)}" title="${escapeHtml(url)}">${label}</a>`;
  }
  if (!/^[a-z][\w+.-]*:/i.test(url) && !url.startsWith('//')) {
    return `<a class="md-link" data-path="${escapeHtml(url)}" title="${escapeHtml(url)}">${label}</a>`;
  }
  return label; // javascript:, data:, file: and the like: text only
}

/** Inline Markdown of one line (or a few joined) to safe HTML. */
export function renderInline(text: string): string {
  const tokens: string[] = [];
  const stash = (html: string): string => `\uE000${tokens.push(html) - 1}\uE000`;
  let work = text.replace(/\uE000/g, '');
  // Code spans first: nothing inside them is Markdown.
  work = work.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) =>
    stash(`<code>${escapeHtml(code.trim() ? code.replace(/^ (.*) $/, '$1') : code)}</code>`),
  );
  // Images are not loaded: shown as a link to their source.
  work = work.replace(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, alt: string, url: string) =>
    stash(linkHtml(escapeHtml(alt || url), url)),
  );
  work = work.replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, label: string, url: string) =>
    stash(linkHtml(renderEmphasis(escapeHtml(label)), url)),
  );
  work = work.replace(/<(https?:\/\/[^\s>]+)>/g, (_m, url: string) => stash(linkHtml(escapeHtml(url), url)));
  work = work.replace(/\bhttps?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/g, (url) => stash(linkHtml(escapeHtml(url), url)));
  let html = renderEmphasis(escapeHtml(work));
  // Tokens may contain tokens (a link label with code): restore until stable.
  for (let pass = 0; pass < 3 && html.includes('\uE000'); pass++) {
    html = html.replace(PLACEHOLDER, (_m, n: string) => tokens[Number(n)] ?? '');
  }
  return html;
}

function renderEmphasis(html: string): string {
  return html
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*(?=[^\s*])([^*]*?[^\s*])\*(?![*\w])/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}
