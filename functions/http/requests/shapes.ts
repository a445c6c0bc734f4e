/**
 * The request bodies as the contract defines them (§2.3.1, §5.5.1, §5.5.3, §5.5.4), for the
 * OpenAPI document (lib/openapi). The handlers' own schemas accept any value for these keys
 * on purpose: the contract checks them as rules, with their own messages and after the
 * chat's or request's existence (404 first), which a schema check would pre-empt.
 */
import * as z from '../../platform/zod.js';
import { LIMITS } from '../../limits.js';

const nonEmpty = z.string().check(z.minLength(1));

const ChoiceOption = z.object({
  id: nonEmpty,
  label: nonEmpty,
  variant: z.optional(z.enum(['primary', 'secondary', 'danger'])),
});

export const ChoiceConfig = z
  .object({
    options: z.array(ChoiceOption).check(z.minLength(1)),
    maxSelections: z._default(z.int().check(z.gte(1)), 1),
    minSelections: z._default(z.int().check(z.gte(0)), 0),
  })
  .check(z.meta({ id: 'ChoiceConfig', description: '`choice`: option ids unique; minSelections ≤ maxSelections.' }));

const TextValidation = z.object({
  minLength: z.optional(z.int().check(z.gte(0))),
  maxLength: z.optional(z.int().check(z.gte(1))),
  pattern: z.optional(z.nullable(z.string())).check(z.meta({ description: 'An ECMAScript regular expression.' })),
});

export const TextInputConfig = z
  .object({
    placeholder: z.optional(z.string()),
    validation: z.optional(TextValidation),
  })
  .check(z.meta({ id: 'TextInputConfig', description: '`text_input`; `{}` is valid.' }));

const FormField = z.object({
  name: nonEmpty,
  type: z.enum(['text', 'textarea', 'select', 'multiselect', 'checkbox', 'date']),
  label: z.optional(z.string()),
  required: z.optional(z.boolean()),
  options: z
    .optional(z.array(nonEmpty).check(z.minLength(1)))
    .check(z.meta({ description: 'Required for select and multiselect, forbidden otherwise.' })),
});

export const FormConfig = z
  .object({
    fields: z.array(FormField).check(z.minLength(1)),
    submitLabel: z.optional(z.string()),
  })
  .check(z.meta({ id: 'FormConfig', description: '`form`: field names unique.' }));

export const RequestConfig = z
  .union([ChoiceConfig, TextInputConfig, FormConfig])
  .check(z.meta({ description: "Validated and normalized against the request's type (§2.3.1)." }));

const trace = z
  .record(z.string(), z.unknown())
  .check(z.meta({ description: 'A free-form object: at most 64 KiB of JSON, 30 levels deep (README "Limits").' }));
const title = nonEmpty.check(z.maxLength(LIMITS.requestTitleChars), z.meta({ description: 'Trimmed, non-empty.' }));
const body = z
  .optional(z.nullable(z.string()))
  .check(z.meta({ description: `At most ${LIMITS.requestTextBytes} UTF-8 bytes.` }));

export const CreateRequestBody = z.object({
  type: z.enum(['choice', 'text_input', 'form']),
  title,
  body,
  config: RequestConfig,
  trace: z.optional(trace),
});

export const UpdateRequestBody = z
  .object({
    title: z.optional(title),
    body,
    config: z.optional(RequestConfig),
    trace: z.optional(trace),
  })
  .check(z.meta({ description: 'At least one of the four fields.' }));

const FormValue = z.union([z.string(), z.boolean(), z.array(z.string())]);

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
