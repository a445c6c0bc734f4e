/**
 * The schema library every function uses: zod's `mini` build, with English messages.
 *
 * Import it as a namespace, `import * as z from '../platform/zod.js'`, never `zod` or `zod/mini`
 * directly. Why mini: a classic zod schema carries every method (`.optional()`, `.transform()`,
 * `.toJSONSchema()`…) and with them every schema kind, ~90 KB in each bundle; a mini schema is
 * a plain value built by functions (`z.optional(s)`, `s.check(z.minLength(1))`), so a bundle
 * keeps only the kinds and checks its routes use (~15 KB). Same parser (zod's core), same
 * issues, same messages, and zod-openapi documents mini schemas as it does classic ones.
 *
 * Why here: classic zod selects English when it loads; mini selects no locale, and its messages
 * would read "Invalid input". This module configures English once, before any schema parses,
 * for every module that takes `z` from it.
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
