/**
 * jest's TypeScript transform: esbuild's `transformSync`, one file at a time (the type checking is
 * `npm run typecheck`'s, as it was with ts-jest's `diagnostics: false`). esbuild is already the
 * bundler of every function (lib/constructs/api-function.ts); it strips a file's types in well
 * under a millisecond where ts-jest loaded the TypeScript compiler into every jest worker and
 * spent milliseconds a file, which a clean clone (CI, no transform cache) paid for every file of
 * every project. The options are tsconfig.json's that change emitted code: imports kept as
 * written (`verbatimModuleSyntax`), class fields defined (ES2022+), ES2023 syntax left as is.
 */
import { createHash } from 'node:crypto';
import { transformSync, version } from 'esbuild';

const TSCONFIG = {
  compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true, target: 'ES2023' },
};

export default {
  canInstrument: false,
  getCacheKey(source, path, options) {
    return createHash('sha256')
      .update(version)
      .update('\0')
      .update(path)
      .update('\0')
      .update(options.supportsStaticESM ? 'esm' : 'cjs')
      .update('\0')
      .update(source)
      .digest('hex');
  },
  process(source, path, options) {
    const out = transformSync(source, {
      loader: 'ts',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'es2023',
      sourcemap: 'external',
      sourcefile: path,
      tsconfigRaw: TSCONFIG,
    });
    return { code: out.code, map: out.map };
  },
};
