/**
 * Recovers the text before an edit from the text after it and the edit's
 * unified diff (the `details.diff` of an `edit_file` result). Pure.
 */

interface Hunk {
  newStart: number;
  newCount: number;
  /** Lines of the old side (context and removed). */
  before: string[];
  /** Lines of the new side (context and added). */
  after: string[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function parseHunks(diff: string): Hunk[] | null {
  const hunks: Hunk[] = [];
  let current: Hunk | null = null;
  for (const line of diff.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n')) {
    const header = HUNK_HEADER.exec(line);
    if (header) {
      current = {
        newStart: Number(header[3]),
        newCount: header[4] === undefined ? 1 : Number(header[4]),
        before: [],
        after: [],
      };
      hunks.push(current);
      continue;
    }
    if (line.startsWith('[diff cut')) {
      return null; // the diff was shortened: it cannot be reversed
    }
    if (!current) {
      continue; // file headers
    }
    if (line.startsWith('\\')) {
      continue; // "\ No newline at end of file"
    }
    const body = line.slice(1);
    if (line.startsWith('+')) {
      current.after.push(body);
    } else if (line.startsWith('-')) {
      current.before.push(body);
    } else if (line.startsWith(' ') || line === '') {
      current.before.push(body);
      current.after.push(body);
    }
  }
  return hunks;
}

/**
 * The text before the change, or null when the diff does not match `after`
 * (another change came since, or the diff was cut).
 */
export function reverseApplyUnifiedDiff(after: string, diff: string): string | null {
  const hunks = parseHunks(diff);
  if (!hunks || hunks.length === 0) {
    return null;
  }
  const eol = after.includes('\r\n') ? '\r\n' : '\n';
  const endsWithEol = after.endsWith(eol);
  const lines = after.split(/\r?\n/);
  if (endsWithEol) {
    lines.pop();
  }
  // Apply from the last hunk so earlier line numbers stay valid.
  for (const hunk of [...hunks].reverse()) {
    if (hunk.after.length !== hunk.newCount) {
      return null;
    }
    const start = hunk.newCount === 0 ? hunk.newStart : hunk.newStart - 1;
    for (let k = 0; k < hunk.after.length; k++) {
      if (lines[start + k] !== hunk.after[k]) {
        return null;
      }
    }
    lines.splice(start, hunk.after.length, ...hunk.before);
  }
  return lines.join(eol) + (endsWithEol ? eol : '');
}
