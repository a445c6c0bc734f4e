/**
 * An interactive request's configuration (contract §2.3.1), declared once: the types the core
 * normalizes to (core/request-config.ts), its enumerations, and the documented request bodies
 * (http/requests/shapes.ts, the OpenAPI document). They are what a normalized configuration
 * holds; the checks that produce one stay rules of their own (core/request-config.ts: the
 * contract's order and messages, after the chat's or request's existence, §5.5.1), and
 * test/unit/request-config.test.ts parses their answers with these schemas.
 */
import { FormFieldType, OptionVariant } from '../model.js';
import * as z from '../platform/zod.js';

const nonEmpty = z.string().check(z.minLength(1));

export const ChoiceOption = z.object({
  id: nonEmpty,
  label: nonEmpty,
  variant: z.optional(OptionVariant),
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
  pattern: z.optional(z.nullable(z.string())).check(
    z.meta({
      description:
        'An ECMAScript regular expression (no flags, an unanchored search), matched in linear time: ' +
        'backreferences, lookahead and lookbehind are refused (docs/divergences.md "Request validation patterns").',
    }),
  ),
});

export const TextInputConfig = z
  .object({
    placeholder: z.optional(z.string()),
    validation: z.optional(TextValidation),
  })
  .check(z.meta({ id: 'TextInputConfig', description: '`text_input`; `{}` is valid.' }));

export const FormField = z.object({
  name: nonEmpty,
  type: FormFieldType,
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

/** A form value: text, a checkbox, or a multiselect's options. */
export const FormValue = z.union([z.string(), z.boolean(), z.array(z.string())]);

/** The stored resolution of each type (§2.3.2). */
export const ResolutionPayload = z.union([
  z.object({ selectedOptionIds: z.array(z.string()) }),
  z.object({ text: z.string() }),
  z.object({ values: z.record(z.string(), FormValue) }),
]);

export type { FormFieldType, OptionVariant } from '../model.js';
export type ChoiceOption = z.output<typeof ChoiceOption>;
export type ChoiceConfig = z.output<typeof ChoiceConfig>;
export type TextInputConfig = z.output<typeof TextInputConfig>;
export type FormField = z.output<typeof FormField>;
export type FormConfig = z.output<typeof FormConfig>;
export type RequestConfig = z.output<typeof RequestConfig>;
export type FormValue = z.infer<typeof FormValue>;
export type ResolutionPayload = z.output<typeof ResolutionPayload>;
