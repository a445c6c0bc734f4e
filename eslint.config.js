// Lint: typescript-eslint's recommended rules, plus: unused code, focused, skipped and todo
// tests are errors (a skipped test proves nothing), and an import against the layers of
// functions/ is an error.
import tseslint from 'typescript-eslint';

const noFocusOrSkip = ['only', 'skip', 'todo'].flatMap((method) =>
  ['it', 'test', 'describe'].map((fn) => ({
    selector: `CallExpression[callee.object.name='${fn}'][callee.property.name='${method}']`,
    message: `${fn}.${method} is not allowed: every test must run.`,
  })),
);

// The layers of functions/ (docs/architecture.md "Layers"): each imports only the layers below it. A folder
// reached by a relative import, from any depth: `../store/…`, `../../core/…`.
const layerImport = (...folders) => `^(\\.\\./)+(${folders.join('|')})/`;
const below = (layer, rule) => `${layer} imports only the layers below it (docs/architecture.md "Layers"): ${rule}.`;
const layers = [
  {
    // The shared vocabulary: the contract's shapes, the error classes, the input limits.
    files: ['functions/model.ts', 'functions/errors.ts', 'functions/limits.ts'],
    patterns: [
      {
        regex: '^\\.{1,2}/(?!platform/zod\\.js$)',
        message: below('model.ts, errors.ts and limits.ts', 'nothing of functions/ but platform/zod.ts'),
      },
    ],
  },
  {
    // The rest of the model layer (model/request-config.ts, the event catalog model/events.ts…): the same rule, and
    // the layer's own files.
    files: ['functions/model/**/*.ts'],
    patterns: [
      {
        regex: '^\\.\\./(?!(model|errors|limits)\\.js$|platform/zod\\.js$)',
        message: below('model/', 'nothing of functions/ but platform/zod.ts and the model layer'),
      },
    ],
  },
  {
    files: ['functions/platform/**/*.ts'],
    patterns: [
      {
        regex: layerImport('store', 'core', 'middleware', 'http', 'jobs'),
        message: below('platform/', 'no store/, core/, middleware/, http/ or jobs/'),
      },
    ],
  },
  {
    files: ['functions/store/**/*.ts'],
    patterns: [
      {
        regex: layerImport('core', 'middleware', 'http', 'jobs'),
        message: below('store/', 'no core/, middleware/, http/ or jobs/'),
      },
    ],
  },
  {
    files: ['functions/core/**/*.ts'],
    patterns: [
      {
        regex: layerImport('middleware', 'http', 'jobs'),
        message: below('core/', 'no middleware/, http/ or jobs/'),
      },
    ],
  },
  {
    files: ['functions/middleware/**/*.ts'],
    patterns: [{ regex: layerImport('http', 'jobs'), message: below('middleware/', 'no http/ or jobs/') }],
  },
  {
    files: ['functions/http/**/*.ts'],
    patterns: [
      { regex: layerImport('jobs'), message: below('http/', 'no jobs/') },
      {
        // A handler makes no storage call: its service does. A record's type is fine.
        regex: layerImport('store'),
        allowTypeImports: true,
        message: below('http/', 'no store/ but its types (a handler calls a service, never the store)'),
      },
    ],
  },
  {
    files: ['functions/jobs/**/*.ts'],
    patterns: [{ regex: layerImport('middleware', 'http'), message: below('jobs/', 'no middleware/ or http/') }],
  },
];

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
  // typescript-eslint's form of the rule, so that these options never replace the zod ones above.
  ...layers.map(({ files, patterns }) => ({
    files,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
  })),
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
