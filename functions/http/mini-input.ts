/**
 * A bridge for the zod/mini migration, to remove once it is done: middleware/validate.ts types a
 * route's inputs (`InputSchemas`, and through it `http()`'s handler input) as classic zod schemas,
 * which a mini schema is not for TypeScript (it has no methods), though at run time it is parsed
 * the same (one core). `asInput(schema)` returns the mini schema itself, typed as the classic
 * schema with the same input and output. A classic type also satisfies `z.core.$ZodType` and
 * `z.ZodMiniType`, so the calls keep compiling when InputSchemas takes those; then drop them and
 * this module.
 */
import type { ZodType } from 'zod';
import type * as z from '../platform/zod.js';

export const asInput = <S extends z.core.$ZodType>(schema: S) => schema as unknown as ZodType<z.output<S>, z.input<S>>;
