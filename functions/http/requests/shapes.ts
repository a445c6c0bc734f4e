/**
 * The request bodies as the contract defines them (§2.3.1, §5.5.1, §5.5.3, §5.5.4), for the
 * OpenAPI document (lib/openapi). The handlers' own schemas accept any value for these keys
 * on purpose: the contract checks them as rules, with their own messages and after the
 * chat's or request's existence (404 first), which a schema check would pre-empt.
 */
import { z } from 'zod';
import { LIMITS } from '../schemas.js';

const nonEmpty = z.string().min(1);

export const ChoiceConfig = z
  .object({
    options: z
      .array(
        z.object({ id: nonEmpty, label: nonEmpty, variant: z.enum(['primary', 'secondary', 'danger']).optional() }),
      )
      .min(1),
    maxSelections: z.int().min(1).default(1),
    minSelections: z.int().min(0).default(0),
  })
  .meta({ id: 'ChoiceConfig', description: '`choice`: option ids unique; minSelections ≤ maxSelections.' });

export const TextInputConfig = z
  .object({
    placeholder: z.string().optional(),
    validation: z
      .object({
        minLength: z.int().min(0).optional(),
        maxLength: z.int().min(1).optional(),
        pattern: z.string().nullable().optional().meta({ description: 'An ECMAScript regular expression.' }),
      })
      .optional(),
  })
  .meta({ id: 'TextInputConfig', description: '`text_input`; `{}` is valid.' });

export const FormConfig = z
  .object({
    fields: z
      .array(
        z.object({
          name: nonEmpty,
          type: z.enum(['text', 'textarea', 'select', 'multiselect', 'checkbox', 'date']),
          label: z.string().optional(),
          required: z.boolean().optional(),
          options: z
            .array(nonEmpty)
            .min(1)
            .optional()
            .meta({ description: 'Required for select and multiselect, forbidden otherwise.' }),
        }),
      )
      .min(1),
    submitLabel: z.string().optional(),
  })
  .meta({ id: 'FormConfig', description: '`form`: field names unique.' });

export const RequestConfig = z
  .union([ChoiceConfig, TextInputConfig, FormConfig])
  .meta({ description: "Validated and normalized against the request's type (§2.3.1)." });

const trace = z
  .record(z.string(), z.unknown())
  .meta({ description: 'A free-form object: at most 64 KiB of JSON, 30 levels deep (README "Limits").' });
const title = nonEmpty.max(LIMITS.requestTitleChars).meta({ description: 'Trimmed, non-empty.' });
const body = z
  .string()
  .nullable()
  .optional()
  .meta({ description: `At most ${LIMITS.requestTextBytes} UTF-8 bytes.` });

export const CreateRequestBody = z.object({
  type: z.enum(['choice', 'text_input', 'form']),
  title,
  body,
  config: RequestConfig,
  trace: trace.optional(),
});

export const UpdateRequestBody = z
  .object({
    title: title.optional(),
    body,
    config: RequestConfig.optional(),
    trace: trace.optional(),
  })
  .meta({ description: 'At least one of the four fields.' });

export const ResolveRequestBody = z
  .object({
    selectedOptionIds: z.array(z.string()).optional().meta({ description: '`choice`: unique configured option ids.' }),
    text: nonEmpty.optional().meta({ description: '`text_input`: non-empty after trimming.' }),
    values: z
      .record(z.string(), z.union([z.string(), z.boolean(), z.array(z.string())]))
      .optional()
      .meta({ description: '`form`: values by field name.' }),
    resolvedBy: z.enum(['user', 'backend']).default('user'),
  })
  .meta({ description: "The resolution data of the request's type, plus `resolvedBy`." });
