// Lint: typescript-eslint's recommended rules, plus: unused code, focused, skipped and todo
// tests are errors (a skipped test proves nothing).
import tseslint from 'typescript-eslint';

const noFocusOrSkip = ['only', 'skip', 'todo'].flatMap((method) =>
  ['it', 'test', 'describe'].map((fn) => ({
    selector: `CallExpression[callee.object.name='${fn}'][callee.property.name='${method}']`,
    message: `${fn}.${method} is not allowed: every test must run.`,
  })),
);

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'cdk.out/**', '.data/**', '.bench/**', 'coverage/**', 'web/dist/**', 'test-output/**'],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        ...noFocusOrSkip,
        { selector: 'CallExpression[callee.name=/^x(it|test|describe)$/]', message: 'Skipped tests are not allowed.' },
      ],
    },
  },
  {
    // Functions take zod/mini, with English messages, from one module (functions/platform/zod.ts):
    // a classic `zod` import would pull ~90 KB back into the bundle and read messages in no locale.
    files: ['functions/**/*.ts'],
    ignores: ['functions/platform/zod.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^zod($|/)', message: "Import zod as `import * as z from '<relative>/platform/zod.js'`." },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
