// Lint: typescript-eslint's recommended rules, plus: unused code, focused, skipped and todo
// tests are errors (a skipped test proves nothing), and an import against the layers of
// functions/ or across the boundaries between functions/, lib/, local/ and web/src is an error.
import tseslint from 'typescript-eslint';

const noFocusOrSkip = ['only', 'skip', 'todo'].flatMap((method) =>
  ['it', 'test', 'describe'].map((fn) => ({
    selector: `CallExpression[callee.object.name='${fn}'][callee.property.name='${method}']`,
    message: `${fn}.${method} is not allowed: every test must run.`,
  })),
);
const testHygiene = [
  ...noFocusOrSkip,
  { selector: 'CallExpression[callee.name=/^x(it|test|describe)$/]', message: 'Skipped tests are not allowed.' },
];

// A folder reached by a relative import, from any depth: `../store/…`, `../../core/…`, `../../../functions/…`.
const layerImport = (...folders) => `^(\\.\\./)+(${folders.join('|')})/`;

// The boundaries between the top folders (docs/architecture.md "Layers"), read off the imports the code
// has: functions/ is what Lambda runs, lib/ the CDK app, local/ the local runtime, web/src the browser app.
const across = (folder, rule) => `${folder} (docs/architecture.md "Layers"): ${rule}.`;
const cdk = '^(aws-cdk-lib|constructs)($|/)';
const boundaries = {
  functions: [
    {
      regex: layerImport('local', 'web', 'test', 'bin'),
      message: across('functions/ is what Lambda runs', 'it imports nothing of local/, web/, test/ or bin/'),
    },
    {
      // The route table is plain data (lib/routes.ts imports nothing): the middleware and the event
      // stream read it as the stack and the local runtime do.
      regex: '^(\\.\\./)+lib/(?!routes\\.js$)',
      message: across('functions/ is what Lambda runs', 'of lib/ it imports only the route table, lib/routes.ts'),
    },
    { regex: cdk, message: across('functions/ is what Lambda runs', 'it never loads the CDK') },
    {
      // Ambient request state leaks into work started from the request (issue 35): a deadline is an
      // argument, and what a client middleware needs is in the runtime's invocation context
      // (functions/platform/invocation.ts).
      regex: '^(node:)?async_hooks$',
      message: across(
        'functions/ is what Lambda runs',
        'no AsyncLocalStorage (node:async_hooks): pass what a call needs, as the deadline is passed',
      ),
    },
  ],
  lib: [
    {
      regex: layerImport('local', 'web', 'test', 'bin'),
      message: across('lib/ is the CDK app', 'it imports nothing of local/, web/, test/ or bin/'),
    },
  ],
  local: [
    {
      regex: layerImport('web', 'test', 'bin'),
      message: across('local/ is the local runtime', 'it imports nothing of web/, test/ or bin/'),
    },
    {
      // It builds the table, the routes, the web app's headers and the stream consumers' mappings
      // from the stack's own definitions.
      regex: '^(\\.\\./)+lib/(constructs/|(stack|deploy-role-stack)\\.js$)',
      message: across(
        'local/ is the local runtime',
        'of lib/ it reads the shared definitions (routes, table schema, stream mappings, web policy and build), not the stack or constructs',
      ),
    },
    { regex: cdk, message: across('local/ is the local runtime', 'it never loads the CDK') },
  ],
  web: [
    {
      regex: layerImport('lib', 'local', 'test', 'bin'),
      message: across('web/src is the browser app', 'it imports nothing of lib/, local/, test/ or bin/'),
    },
    {
      // The API's shapes, erased from the bundle; and the service's own rule for a text_input's
      // pattern (functions/platform/text-pattern.ts, which imports nothing of the project), loaded on first use.
      regex: '^(\\.\\./)+functions/(?!platform/text-pattern(\\.js)?$)',
      allowTypeImports: true,
      message: across(
        'web/src is the browser app',
        'it takes only types from functions/, and at run time only platform/text-pattern.ts',
      ),
    },
  ],
};

// The web app's folders (docs/web-app.md "Folders"): api/ (the service: HTTP client, generated types,
// query cache) below shared/ (helpers and the configuration) below live/ (the event stream, push)
// below the features, which may use one another; the frame (App.tsx, live-cache.ts, main.tsx) sits on top.
const FEATURES = ['inbox', 'chat', 'requests', 'approvals', 'decisions', 'media', 'search', 'settings', 'sign-in'];
const appFrame = '^(\\.\\./)+(App|live-cache|main)(\\.js|\\.tsx?)?$';
const webFolder = (folder, rule) => `web/src/${folder} (docs/web-app.md "Folders"): ${rule}.`;
const webLayers = [
  {
    files: ['web/src/api/**/*.{ts,tsx}'],
    patterns: [
      { regex: layerImport('shared', 'live', ...FEATURES), message: webFolder('api/', 'it imports no other folder') },
      {
        regex: '^(\\.\\./)+(router|App|live-cache|main)(\\.js|\\.tsx?)?$',
        message: webFolder('api/', 'it imports no other folder'),
      },
    ],
  },
  {
    files: ['web/src/shared/**/*.{ts,tsx}'],
    patterns: [
      { regex: layerImport('live', ...FEATURES), message: webFolder('shared/', 'it imports only api/ and the router') },
      { regex: appFrame, message: webFolder('shared/', 'it imports only api/ and the router') },
    ],
  },
  {
    files: ['web/src/live/**/*.{ts,tsx}'],
    patterns: [
      { regex: layerImport(...FEATURES), message: webFolder('live/', 'it imports api/ and shared/, no feature') },
      { regex: appFrame, message: webFolder('live/', 'it imports api/ and shared/, no feature') },
    ],
  },
  {
    files: FEATURES.map((feature) => `web/src/${feature}/**/*.{ts,tsx}`),
    patterns: [
      {
        regex: appFrame,
        message: webFolder('<feature>/', 'the app frame (App.tsx, live-cache.ts) uses it, never the other way'),
      },
    ],
  },
];

/**
 * The same patterns for `import('…')`, which no-restricted-imports does not see: no-restricted-syntax
 * selectors on the literal source (a `/` in esquery's regex is spelled \x2F).
 */
const dynamicImports = (patterns) =>
  patterns.map(({ regex, message }) => ({
    selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`,
    message,
  }));

// The layers of functions/ (docs/architecture.md "Layers"): each imports only the layers below it.
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
    // The web app loads it too (web/src/components/Requests.tsx): nothing of the service may come with it.
    files: ['functions/platform/text-pattern.ts'],
    patterns: [
      {
        regex: '^\\.',
        message: across('platform/text-pattern.ts is loaded by the web app too', 'it imports nothing of the project'),
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
      'no-restricted-syntax': ['error', ...testHygiene],
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
  // typescript-eslint's form of the rule, so that these options never replace the zod ones above. A
  // file takes the options of the last entry naming it, so each layer's entry repeats its folder's boundary.
  ...[
    { files: ['functions/**/*.ts'], patterns: boundaries.functions },
    ...layers.map(({ files, patterns }) => ({ files, patterns: [...boundaries.functions, ...patterns] })),
    { files: ['lib/**/*.ts'], patterns: boundaries.lib },
    {
      // The route table is bundled into functions/ (their middleware reads it): plain data, no import.
      files: ['lib/routes.ts'],
      patterns: [
        { regex: '^', message: across('lib/routes.ts is plain data functions/ bundle', 'it imports nothing') },
      ],
    },
    { files: ['local/**/*.ts'], patterns: boundaries.local },
    { files: ['web/src/**/*.{ts,tsx}'], patterns: boundaries.web },
    ...webLayers.map(({ files, patterns }) => ({ files, patterns: [...boundaries.web, ...patterns] })),
  ].map(({ files, patterns }) => ({
    files,
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
  })),
  // Dynamic imports across the same boundaries (the global no-restricted-syntax list, plus these).
  ...[
    ['functions/**/*.ts', boundaries.functions],
    ['lib/**/*.ts', boundaries.lib],
    ['local/**/*.ts', boundaries.local],
    ['web/src/**/*.{ts,tsx}', boundaries.web],
    ...webLayers.map(({ files, patterns }) => [files, [...boundaries.web, ...patterns]]),
  ].map(([files, patterns]) => ({
    files: Array.isArray(files) ? files : [files],
    rules: { 'no-restricted-syntax': ['error', ...testHygiene, ...dynamicImports(patterns)] },
  })),
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
