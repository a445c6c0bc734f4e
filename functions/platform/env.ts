/**
 * The function's environment, read and validated once per container. Only the local
 * runtime sets DYNAMODB_ENDPOINT; nothing else differs between Lambda and local.
 */
import { z } from 'zod';

const Env = z.object({
  TABLE_NAME: z.string().min(1),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  DYNAMODB_ENDPOINT: z.string().url().optional(),
  /** ARN of the Secrets Manager secret holding the instance secret, when enabled. */
  INSTANCE_SECRET_ARN: z.string().min(1).optional(),
  SERVICE_VERSION: z.string().min(1).default('0.1.0'),
  /** SSE stream lifetime and timers (ms); defaults in core/event-stream.ts. Tests shorten them. */
  SSE_LIFETIME_MS: z.coerce.number().int().positive().optional(),
  SSE_KEEPALIVE_MS: z.coerce.number().int().positive().optional(),
  SSE_HOLE_GRACE_MS: z.coerce.number().int().positive().optional(),
  /** Adds x-ddb-* usage headers to responses (benchmarks only). */
  EXPOSE_USAGE_HEADERS: z.enum(['0', '1']).default('0'),
});
export type Env = z.infer<typeof Env>;

let cached: Env | undefined;
export function env(): Env {
  cached ??= Env.parse(process.env);
  return cached;
}
