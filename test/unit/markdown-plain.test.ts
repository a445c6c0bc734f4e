import { describe, expect, it } from '@jest/globals';
import { plainText, previewText } from '../../web/src/shared/markdown/plain.js';

describe('plainText (the chat list preview of a markdown message)', () => {
  it.each([
    [
      '## Deploy plan\n\nSteps, in **order**:\n\n1. Build the `release` branch\n2. Run the [checks](https://x.test)',
      'Deploy plan Steps, in order: Build the release branch Run the checks',
    ],
    ['| Stage | Time |\n|---|---|\n| build | 3 min |', 'Stage Time build 3 min'],
    ['> quoted *text*\n\n- [x] done ~~not~~', 'quoted text done not'],
    ['```ts\nconst a = 1;\n```\nafter', 'const a = 1; after'],
    ['![the chart](chart.png) and <b>raw</b>', 'the chart and <b>raw</b>'],
    ['line one  \nline two\n\n---\n\nthree', 'line one line two three'],
    ['Plain text stays as it is.', 'Plain text stays as it is.'],
    ['cut off in the **mid', 'cut off in the **mid'],
    ['[ref][1]\n\n[1]: https://x.test', 'ref'],
    ['', ''],
  ])('%j reads %j', (markdown, plain) => {
    expect(plainText(markdown)).toBe(plain);
  });
});

describe('previewText', () => {
  it('is the plain text, or the preview as written when no text is left', () => {
    expect(previewText('**Build** done')).toBe('Build done');
    expect(previewText('---')).toBe('---');
    expect(previewText('Voice note')).toBe('Voice note');
  });
});
