/**
 * Interactive request configuration and resolution payloads (contract §2.3.1, §2.3.2,
 * §5.5.1, §5.5.4): validation in the contract's order with its messages, and normalization
 * (unknown keys dropped, defaults filled). The types normalized to and their enumerations are
 * inferred from model/request-config.ts's zod schemas, the ones the OpenAPI document shows, so
 * the two cannot drift apart. Pure functions: no storage.
 */
import { FieldRuleError } from '../errors.js';
import { FormFieldType, OptionVariant, RequestType } from '../model.js';
import { patternProblem, textMatchesPattern } from '../platform/text-pattern.js';
import type {
  ChoiceConfig,
  ChoiceOption,
  FormConfig,
  FormField,
  RequestConfig,
  ResolutionPayload,
  TextInputConfig,
} from '../model/request-config.js';

export type { RequestType } from '../model.js';
export type {
  ChoiceConfig,
  ChoiceOption,
  FormConfig,
  FormField,
  FormFieldType,
  RequestConfig,
  ResolutionPayload,
  TextInputConfig,
} from '../model/request-config.js';

/** Each enumeration as its schema lists it. */
export const REQUEST_TYPES = RequestType.options;
const FIELD_TYPES = FormFieldType.options;
const VARIANTS = OptionVariant.options;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
/** Optional keys treat null as absent (§2.3.1). */
const given = (v: unknown): boolean => v !== undefined && v !== null;

/** A trimmed, non-empty string at `field`, with the contract's two messages. */
export function requiredText(value: unknown, field: string, name = field): string {
  if (typeof value !== 'string') throw new FieldRuleError(field, `${name} must be a string.`);
  const trimmed = value.trim();
  if (trimmed === '') throw new FieldRuleError(field, `${name} cannot be empty.`);
  return trimmed;
}

/** Validates and normalizes `config` for `type` (§2.3.1). */
export function normalizeConfig(type: RequestType, config: unknown): RequestConfig {
  if (!isObject(config)) throw new FieldRuleError('config', 'config must be a JSON object.');
  switch (type) {
    case 'choice':
      return choiceConfig(config);
    case 'text_input':
      return textInputConfig(config);
    case 'form':
      return formConfig(config);
  }
}

function choiceConfig(config: Record<string, unknown>): ChoiceConfig {
  const { options } = config;
  if (!Array.isArray(options) || options.length === 0) {
    throw new FieldRuleError('config.options', 'choice config requires at least one option.');
  }
  const normalized = options.map((option, i): ChoiceOption => {
    const at = `config.options[${i}]`;
    if (!isObject(option)) throw new FieldRuleError(at, `${at} must be a JSON object.`);
    const id = requiredText(option.id, `${at}.id`);
    const label = requiredText(option.label, `${at}.label`);
    if (!given(option.variant)) return { id, label };
    if (!VARIANTS.includes(option.variant as never)) {
      throw new FieldRuleError(`${at}.variant`, `option.variant must be one of ${VARIANTS.join(', ')}.`);
    }
    return { id, label, variant: option.variant as ChoiceOption['variant'] & string };
  });
  const seen = new Set<string>();
  for (const o of normalized) {
    if (seen.has(o.id))
      throw new FieldRuleError('config.options', 'choice options must have unique ids.', { optionId: o.id });
    seen.add(o.id);
  }
  let maxSelections = 1;
  if (given(config.maxSelections)) {
    if (!isInt(config.maxSelections) || config.maxSelections < 1) {
      throw new FieldRuleError('config.maxSelections', 'config.maxSelections must be an integer >= 1.');
    }
    maxSelections = config.maxSelections;
  }
  let minSelections = 0;
  if (given(config.minSelections)) {
    if (!isInt(config.minSelections) || config.minSelections < 0) {
      throw new FieldRuleError('config.minSelections', 'config.minSelections must be an integer >= 0.');
    }
    minSelections = config.minSelections;
  }
  if (minSelections > maxSelections) {
    throw new FieldRuleError(
      'config.minSelections',
      'config.minSelections cannot be greater than config.maxSelections.',
    );
  }
  return { options: normalized, maxSelections, minSelections };
}

function textInputConfig(config: Record<string, unknown>): TextInputConfig {
  const out: TextInputConfig = {};
  if (given(config.placeholder)) {
    if (typeof config.placeholder !== 'string')
      throw new FieldRuleError('config.placeholder', 'config.placeholder must be a string.');
    out.placeholder = config.placeholder;
  }
  if (given(config.validation)) {
    const v = config.validation;
    if (!isObject(v)) throw new FieldRuleError('config.validation', 'config.validation must be a JSON object.');
    const validation: NonNullable<TextInputConfig['validation']> = {};
    if (given(v.minLength)) {
      if (!isInt(v.minLength) || v.minLength < 0) {
        throw new FieldRuleError('config.validation.minLength', 'config.validation.minLength must be an integer >= 0.');
      }
      validation.minLength = v.minLength;
    }
    if (given(v.maxLength)) {
      if (!isInt(v.maxLength) || v.maxLength < 1) {
        throw new FieldRuleError('config.validation.maxLength', 'config.validation.maxLength must be an integer >= 1.');
      }
      validation.maxLength = v.maxLength;
    }
    if (
      validation.minLength !== undefined &&
      validation.maxLength !== undefined &&
      validation.minLength > validation.maxLength
    ) {
      throw new FieldRuleError('config.validation.minLength', 'config.validation.minLength cannot exceed maxLength.');
    }
    if (v.pattern !== undefined) {
      if (v.pattern !== null && typeof v.pattern !== 'string') {
        throw new FieldRuleError('config.validation.pattern', 'config.validation.pattern must be a string or null.');
      }
      // It must compile as ECMAScript and for the linear-time engine it is matched with
      // (platform/text-pattern.ts: no backreferences, no lookaround).
      if (typeof v.pattern === 'string' && patternProblem(v.pattern) !== undefined) {
        throw new FieldRuleError(
          'config.validation.pattern',
          'config.validation.pattern must be a valid regular expression.',
        );
      }
      validation.pattern = v.pattern;
    }
    out.validation = validation;
  }
  return out;
}

function formConfig(config: Record<string, unknown>): FormConfig {
  const { fields } = config;
  if (!Array.isArray(fields) || fields.length === 0)
    throw new FieldRuleError('config.fields', 'form config requires at least one field.');
  const normalized = fields.map((field, i): FormField => {
    const at = `config.fields[${i}]`;
    if (!isObject(field)) throw new FieldRuleError(at, `${at} must be a JSON object.`);
    const name = requiredText(field.name, `${at}.name`);
    // Its value would be a `__proto__` key, which no body may carry (docs/architecture.md "Limits").
    if (name === '__proto__') throw new FieldRuleError(`${at}.name`, 'form field name must not be __proto__.');
    if (!FIELD_TYPES.includes(field.type as never)) {
      throw new FieldRuleError(
        `${at}.type`,
        `form field type must be ${FIELD_TYPES.slice(0, -1).join(', ')}, or ${FIELD_TYPES.at(-1)}.`,
      );
    }
    const type = field.type as FormFieldType;
    const out: FormField = { name, type };
    if (given(field.label)) {
      if (typeof field.label !== 'string') throw new FieldRuleError(`${at}.label`, `${at}.label must be a string.`);
      out.label = field.label;
    }
    if (given(field.required)) {
      if (typeof field.required !== 'boolean')
        throw new FieldRuleError(`${at}.required`, 'form field required must be a boolean.');
      out.required = field.required;
    }
    const takesOptions = type === 'select' || type === 'multiselect';
    if (takesOptions) {
      const options = field.options;
      const valid =
        Array.isArray(options) && options.length > 0 && options.every((o) => typeof o === 'string' && o.trim() !== '');
      if (!valid)
        throw new FieldRuleError(`${at}.options`, 'select and multiselect fields require non-empty string options.');
      out.options = (options as string[]).map((o) => o.trim());
    } else if (given(field.options)) {
      throw new FieldRuleError(`${at}.options`, 'options are only supported for select or multiselect fields.');
    }
    return out;
  });
  const names = new Set<string>();
  for (const f of normalized) {
    if (names.has(f.name))
      throw new FieldRuleError('config.fields', 'form fields must have unique names.', { name: f.name });
    names.add(f.name);
  }
  const out: FormConfig = { fields: normalized };
  if (given(config.submitLabel)) {
    if (typeof config.submitLabel !== 'string')
      throw new FieldRuleError('config.submitLabel', 'config.submitLabel must be a string.');
    out.submitLabel = config.submitLabel;
  }
  return out;
}

/** Validates a resolution body against the request's type and config; returns the stored payload (§5.5.4). */
export function normalizeResolution(
  type: RequestType,
  config: RequestConfig,
  input: Record<string, unknown>,
): ResolutionPayload {
  switch (type) {
    case 'choice':
      return choiceResolution(config as ChoiceConfig, input.selectedOptionIds);
    case 'text_input':
      return textResolution(config as TextInputConfig, input.text);
    case 'form':
      return formResolution(config as FormConfig, input.values);
  }
}

function choiceResolution(config: ChoiceConfig, selected: unknown): ResolutionPayload {
  const field = 'selectedOptionIds';
  if (!Array.isArray(selected) || !selected.every((s) => typeof s === 'string')) {
    throw new FieldRuleError(field, 'choice resolution requires selectedOptionIds string array.');
  }
  const ids = selected as string[];
  if (new Set(ids).size !== ids.length) throw new FieldRuleError(field, 'selectedOptionIds must be unique.');
  const known = new Set(config.options.map((o) => o.id));
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined)
    throw new FieldRuleError(field, 'selectedOptionIds contains unknown option.', { optionId: unknown });
  if (ids.length < config.minSelections) {
    throw new FieldRuleError(field, 'selectedOptionIds does not satisfy minimum selections.', {
      minSelections: config.minSelections,
    });
  }
  if (ids.length > config.maxSelections) {
    throw new FieldRuleError(field, 'selectedOptionIds exceeds maximum selections.', {
      maxSelections: config.maxSelections,
    });
  }
  return { selectedOptionIds: ids };
}

function textResolution(config: TextInputConfig, text: unknown): ResolutionPayload {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  if (trimmed === '') throw new FieldRuleError('text', 'text_input resolution requires non-empty text.');
  const { minLength, maxLength, pattern } = config.validation ?? {};
  // Lengths in UTF-16 code units, as the contract says: String.prototype.length.
  if (minLength !== undefined && trimmed.length < minLength) {
    throw new FieldRuleError('text', 'text is shorter than minimum length.', { minLength });
  }
  if (maxLength !== undefined && trimmed.length > maxLength) {
    throw new FieldRuleError('text', 'text is longer than maximum length.', { maxLength });
  }
  if (typeof pattern === 'string' && !textMatchesPattern(pattern, trimmed)) {
    throw new FieldRuleError('text', 'text does not match required pattern.');
  }
  return { text: trimmed };
}

/**
 * §5.5.4's form rules in its order (and the reference's): unknown keys, then each submitted
 * value's type, in submitted order, then each configured field's presence and, for strings and
 * arrays, non-emptiness when required.
 */
function formResolution(config: FormConfig, values: unknown): ResolutionPayload {
  if (!isObject(values)) throw new FieldRuleError('values', 'form resolution requires values object.');
  const fields = new Map(config.fields.map((f) => [f.name, f]));
  for (const name of Object.keys(values)) {
    if (!fields.has(name)) throw new FieldRuleError('values', 'values contains unknown field.', { name });
  }
  // Keys in submitted order: the dispatch line renders this object as JSON (§4.4.8).
  const out: Record<string, string | boolean | string[]> = {};
  for (const [name, value] of Object.entries(values)) {
    const field = fields.get(name)!;
    const at = `values.${name}`;
    if (field.type === 'checkbox') {
      if (typeof value !== 'boolean') throw new FieldRuleError(at, 'checkbox fields require boolean values.');
    } else if (field.type === 'multiselect') {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        throw new FieldRuleError(at, 'multiselect fields require string array values.');
      }
      if (value.some((v) => !field.options!.includes(v)))
        throw new FieldRuleError(at, 'multiselect values contain unknown option.');
    } else {
      if (typeof value !== 'string') throw new FieldRuleError(at, 'field value must be a string.');
      if (field.type === 'select' && !field.options!.includes(value)) {
        throw new FieldRuleError(at, 'select value must match one of the configured options.');
      }
    }
    out[name] = value as string | boolean | string[];
  }
  for (const field of config.fields) {
    if (!field.required) continue;
    const at = `values.${field.name}`;
    // Own keys only: a field named `constructor` or `toString` is not given by the prototype.
    const value = Object.hasOwn(out, field.name) ? out[field.name] : undefined;
    if (value === undefined) throw new FieldRuleError(at, 'missing required form value.');
    const blank = Array.isArray(value)
      ? value.every((v) => v.trim() === '')
      : typeof value === 'string' && value.trim() === '';
    if (blank) throw new FieldRuleError(at, 'required form value cannot be empty.');
  }
  return { values: out };
}
