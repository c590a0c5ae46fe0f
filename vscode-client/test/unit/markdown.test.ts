import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml, renderInline, renderMarkdown } from '../../src/shared/markdown';

const TAGS = new Set(['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'a', 'ul', 'ol', 'li', 'blockquote', 'hr',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);
const ATTRIBUTES = new Set(['class', 'data-href', 'data-path', 'title', 'start']);

/** Every real tag (text `<` is escaped) is an allowed one with allowed attributes. */
function assertOnlySafeMarkup(html: string): void {
  for (const [, name = '', attrs = ''] of html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/gi)) {
    assert.ok(TAGS.has(name.toLowerCase()), `tag <${name}> in ${html}`);
    const rest = attrs.replace(/\s([a-z-]+)="([^"<>]*)"/gi, (_m, attr: string, value: string) => {
      assert.ok(ATTRIBUTES.has(attr), `attribute ${attr} in ${html}`);
      if (attr === 'data-href') {
        assert.match(value, /^(https?:\/\/|mailto:)/);
      }
      return '';
    });
    assert.equal(rest.trim(), '', `unparsed attribute text in <${name}${attrs}>`);
  }
}

describe('renderMarkdown is safe', () => {
  const attacks: [string, string][] = [
    ['raw script tag', '<script>alert(1)</script>'],
    ['image onerror', '<img src=x onerror=alert(1)>'],
    ['javascript link', '[click](javascript:alert(1))'],
    ['data link', '[x](data:text/html;base64,PHNjcmlwdD4=)'],
    ['attribute break-out in a link', '[x](https://a.example/"onmouseover="alert(1))'],
    ['html in code', '`<b>bold</b>` and ```\n<iframe src=x>\n```'],
    ['html in a table', '| a | b |\n|---|---|\n| <svg onload=alert(1)> | x |'],
    ['remote image', '![logo](https://tracker.example/p.png)'],
    ['entity tricks', '&lt;script&gt; &#x3C;b&#x3E; [a](&#106;avascript:alert(1))'],
  ];
  for (const [name, source] of attacks) {
    it(`neutralises ${name}`, () => {
      assertOnlySafeMarkup(renderMarkdown(source));
    });
  }

  it('shows raw HTML as text and images as links, loading nothing', () => {
    assert.equal(renderMarkdown('<b onclick="x()">hi</b>'), '<p>&lt;b onclick=&quot;x()&quot;&gt;hi&lt;/b&gt;</p>');
    assert.equal(
      renderMarkdown('![logo](https://tracker.example/p.png)'),
      '<p><a class="md-link" data-href="https://tracker.example/p.png" title="https://tracker.example/p.png">logo</a></p>',
    );
  });

  it('escapes the five HTML characters', () => {
    assert.equal(escapeHtml(`<a href="x">&'`), '&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
  });
});

describe('renderMarkdown renders what models write', () => {
  it('renders paragraphs with line breaks, emphasis and inline code', () => {
    assert.equal(
      renderMarkdown('Fixed **mean()** and *report()*.\nSee `calc.py` ~~now~~.'),
      '<p>Fixed <strong>mean()</strong> and <em>report()</em>.<br>See <code>calc.py</code> <del>now</del>.</p>',
    );
  });

  it('does not treat snake_case or ** inside code as emphasis', () => {
    assert.equal(renderInline('use max_tool_result_chars and `a**b**c`'), 'use max_tool_result_chars and <code>a**b**c</code>');
  });

  it('renders fenced code, also unterminated while streaming', () => {
    assert.equal(renderMarkdown('```python\nx = 1 < 2\n```'), '<pre><code class="language-python">x = 1 &lt; 2</code></pre>');
    assert.equal(renderMarkdown('```\npartial'), '<pre><code>partial</code></pre>');
  });

  it('renders headings, lists, nested lists, quotes and rules', () => {
    assert.equal(renderMarkdown('## Plan'), '<h2>Plan</h2>');
    assert.equal(renderMarkdown('1. one\n2. two'), '<ol><li>one</li><li>two</li></ol>');
    assert.equal(renderMarkdown('3. three\n4. four'), '<ol start="3"><li>three</li><li>four</li></ol>');
    assert.equal(renderMarkdown('- a\n  - b\n- c'), '<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>');
    assert.equal(renderMarkdown('> quoted\n> text'), '<blockquote><p>quoted<br>text</p></blockquote>');
    assert.equal(renderMarkdown('---'), '<hr>');
  });

  it('renders a list right after a paragraph line', () => {
    assert.equal(renderMarkdown('Both fixed:\n- a\n- b'), '<p>Both fixed:</p><ul><li>a</li><li>b</li></ul>');
  });

  it('renders tables with alignment', () => {
    assert.equal(
      renderMarkdown('| file | errors |\n|:--|--:|\n| calc.py | 0 |'),
      '<table><thead><tr><th class="align-left">file</th><th class="align-right">errors</th></tr></thead>' +
        '<tbody><tr><td class="align-left">calc.py</td><td class="align-right">0</td></tr></tbody></table>',
    );
  });

  it('turns links into data attributes the panel opens through the extension', () => {
    assert.equal(
      renderInline('[docs](https://example.com/a_b?x=1&y=2)'),
      '<a class="md-link" data-href="https://example.com/a_b?x=1&amp;y=2" title="https://example.com/a_b?x=1&amp;y=2">docs</a>',
    );
    assert.equal(
      renderInline('[calc.py](src/calc.py)'),
      '<a class="md-link" data-path="src/calc.py" title="src/calc.py">calc.py</a>',
    );
    assert.match(renderInline('see https://example.com/x.'), /data-href="https:\/\/example\.com\/x"/);
  });
});
