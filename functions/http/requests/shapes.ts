/**
 * The request bodies as the contract defines them (§2.3.1, §5.5.1, §5.5.3, §5.5.4), for the
 * OpenAPI document (lib/openapi); the configuration is model/request-config.ts's, the one the
 * core normalizes to. The handlers' own schemas accept any value for these keys
 * on purpose: the contract checks them as rules, with their own messages and after the
 * chat's or request's existence (404 first), which a schema check would pre-empt.
 */
import * as z from '../../platform/zod.js';
import { LIMITS } from '../../limits.js';
import { RequestType } from '../../model.js';
import { FormValue, RequestConfig } from '../../model/request-config.js';

const nonEmpty = z.string().check(z.minLength(1));

const traceDescription = 'A free-form object: at most 64 KiB of JSON, 30 levels deep (docs/architecture.md "Limits").';
const trace = z.record(z.string(), z.unknown()).check(z.meta({ description: traceDescription }));
const title = nonEmpty.check(z.maxLength(LIMITS.requestTitleChars), z.meta({ description: 'Trimmed, non-empty.' }));
const body = z
  .optional(z.nullable(z.string()))
  .check(z.meta({ description: `At most ${LIMITS.requestTextBytes} UTF-8 bytes.` }));

/** The `deadline` body field (§5.5.6): what happens if nobody answers in time, and the reminders before. */
const DeadlineBody = z
  .nullable(
    z.object({
      at: z.optional(
        z
          .string()
          .check(z.meta({ format: 'date-time', description: 'ISO timestamp with offset, 10 s to 30 days ahead.' })),
      ),
      inSeconds: z.optional(z.int().check(z.gte(10), z.lte(2_592_000))),
      onExpiry: z._default(z.enum(['cancel', 'resolve']), 'cancel'),
      default: z.optional(
        z.record(z.string(), z.unknown()).check(
          z.meta({
            description:
              "Required with `resolve`, forbidden with `cancel`: a resolution body for the request's type, " +
              'validated as POST /requests/{id}/resolve validates it; errors name `deadline.default.<field>`.',
          }),
        ),
      ),
      remindBeforeSeconds: z.optional(
        z
          .array(z.int().check(z.gte(1)))
          .check(z.maxLength(3), z.meta({ description: 'Distinct, each less than the time left to the deadline.' })),
      ),
    }),
  )
  .check(
    z.meta({
      description:
        'Exactly one of `at` and `inSeconds`. `null`: no deadline (on PATCH, removes it; only while pending).',
    }),
  );

export const CreateRequestBody = z.object({
  type: RequestType,
  title,
  body,
  config: RequestConfig,
  trace: z.optional(trace),
  deadline: z.optional(DeadlineBody),
});

export const UpdateRequestBody = z
  .object({
    title: z.optional(title),
    body,
    config: z.optional(RequestConfig),
    trace: z.optional(trace),
    deadline: z.optional(DeadlineBody),
  })
  .check(z.meta({ description: 'At least one of the five fields.' }));

export const ResolveRequestBody = z
  .object({
    selectedOptionIds: z
      .optional(z.array(z.string()))
      .check(z.meta({ description: '`choice`: unique configured option ids.' })),
    text: z.optional(nonEmpty).check(z.meta({ description: '`text_input`: non-empty after trimming.' })),
    values: z.optional(z.record(z.string(), FormValue)).check(z.meta({ description: '`form`: values by field name.' })),
    resolvedBy: z._default(z.enum(['user', 'backend']), 'user'),
  })
  .check(z.meta({ description: "The resolution data of the request's type, plus `resolvedBy`." }));
