import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reverseApplyUnifiedDiff } from '../../src/panel/patch';
import { loadEvents } from '../helpers';

const V0 = `"""Tiny calculator used by the Rein examples."""


def divide(a: float, b: float) -> float:
    return a / b


def mean(values: list[float]) -> float:
    return divide(sum(values), len(values))


def report(values: list[float]) -> str:
    return f"mean={mean(values):.2f} n={count}"
`;
const V1 = V0.replace(
  '    return divide(sum(values), len(values))',
  '    if not values:\n        return 0.0\n    return divide(sum(values), len(values))',
);
const V2 = V1.replace('n={count}', 'n={len(values)}');

function diffOf(toolCallId: string): string {
  for (const envelope of loadEvents()) {
    const event = envelope.event as { type: string; tool_call_id?: string; details?: { diff?: string } };
    if (event.type === 'tool_call_end' && event.tool_call_id === toolCallId) {
      return event.details?.diff ?? '';
    }
  }
  throw new Error(`no tool_call_end for ${toolCallId}`);
}

describe('reverseApplyUnifiedDiff', () => {
  it('recovers the text before each recorded edit (difflib diffs, as edit_file makes them)', () => {
    assert.equal(reverseApplyUnifiedDiff(V1, diffOf('call_edit1')), V0);
    assert.equal(reverseApplyUnifiedDiff(V2, diffOf('call_edit2')), V1);
  });

  it('keeps CRLF line ends', () => {
    const crlf = (text: string): string => text.replace(/\n/g, '\r\n');
    assert.equal(reverseApplyUnifiedDiff(crlf(V1), diffOf('call_edit1')), crlf(V0));
  });

  it('handles several hunks, pure insertions and deletions', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n';
    const after = 'a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n';
    const diff = '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -9,2 +9,3 @@\n i\n j\n+k';
    assert.equal(reverseApplyUnifiedDiff(after, diff), before);
    assert.equal(reverseApplyUnifiedDiff('x\ny\n', '@@ -0,0 +1,1 @@\n+x'), 'y\n');
    assert.equal(reverseApplyUnifiedDiff('y\n', '@@ -1,2 +0,0 @@\n-x\n-z'), 'x\nz\ny\n');
  });

  it('gives up when the text moved on or the diff was cut', () => {
    assert.equal(reverseApplyUnifiedDiff(V0, diffOf('call_edit1')), null);
    assert.equal(reverseApplyUnifiedDiff(V1, `${diffOf('call_edit1')}\n[diff cut: 40 more lines]`), null);
    assert.equal(reverseApplyUnifiedDiff(V1, 'not a diff'), null);
  });
});
