/**
 * The attachments' tagged blocks in a user message as the server wrote them
 * (rein.lsp.attachments): split off the prompt text so the panel shows the
 * text and each attachment folded, not the raw tags. Pure.
 */

import * as l10n from '@vscode/l10n';

export interface AttachmentBlock {
  kind: string;
  path?: string | undefined;
  lines?: string | undefined;
  body: string;
}

const BLOCK = /\n\n<attachment kind="([a-z]+)"(?: path="([^"]*)")?(?: lines="([^"]*)")?>\n([\s\S]*?)\n<\/attachment>(?=\n\n<attachment |$)/g;

const unescape = (value: string): string => value.replace(/&lt;/g, '<').replace(/&quot;/g, '"').replace(/&amp;/g, '&');

/** The prompt text and its attachments; a message without blocks is all text. */
export function splitAttachments(content: string): { text: string; blocks: AttachmentBlock[] } {
  const first = content.search(/\n\n<attachment kind="[a-z]+"/);
  if (first < 0) {
    return { text: content, blocks: [] };
  }
  const blocks: AttachmentBlock[] = [];
  let consumed = first;
  for (const match of content.slice(first).matchAll(BLOCK)) {
    if (first + match.index !== consumed) {
      break; // not a run of blocks up to the end: leave the message as it is
    }
    blocks.push({
      kind: match[1] ?? '',
      path: match[2] === undefined ? undefined : unescape(match[2]),
      lines: match[3],
      body: (match[4] ?? '').replace(/<\\\/attachment>/g, '</attachment>'),
    });
    consumed += match[0].length;
  }
  if (consumed !== content.length) {
    return { text: content, blocks: [] };
  }
  return { text: content.slice(0, first), blocks };
}

/** How a block is named in the panel: `src/calc.py`, `app.py:4-6`, `Problems: src/calc.py`, `Terminal`. */
export function blockLabel(block: AttachmentBlock): string {
  const where = block.path ? `${block.path}${block.lines ? `:${block.lines}` : ''}` : '';
  switch (block.kind) {
    case 'file':
    case 'selection':
      return where || block.kind;
    case 'problems':
      return where ? l10n.t('Problems: {0}', where) : l10n.t('Problems');
    case 'terminal':
      return l10n.t('Terminal');
    default:
      return where || block.kind;
  }
}
