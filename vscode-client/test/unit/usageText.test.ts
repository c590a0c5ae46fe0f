import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { usageText } from '../../src/shared/viewModel';

describe('usage in the panel', () => {
  it('marks estimated counts (vscode-lm reports none) with ≈', () => {
    assert.equal(usageText({ input_tokens: 4870, output_tokens: 53, estimated: true }), '≈4.87k in · ≈53 out');
    assert.equal(usageText({ input_tokens: 4870, output_tokens: 53 }), '4.87k in · 53 out');
  });
});
