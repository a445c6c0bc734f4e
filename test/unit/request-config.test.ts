/**
 * Interactive request config and resolution payloads, as pure functions: normalization
 * (contract §2.3.1, §2.3.2) and every rule error of §5.5.1 (config part) and §5.5.4.
 */
import { describe, expect, it } from '@jest/globals';
import { normalizeConfig, normalizeResolution } from '../../functions/core/request-config.js';
import type { RequestConfig, RequestType } from '../../functions/core/request-config.js';
import { ChoiceConfig, FormConfig, TextInputConfig } from '../../functions/model/request-config.js';

/** A rule error on `field`, as a case's message and details. */
const ruleOn = (field: string, message: string) => [message, { field }] as const;

interface Caught {
  status: unknown;
  code: unknown;
  message: string;
  details: unknown;
}

/** Runs `fn`, which must throw a 400 VALIDATION_ERROR, and returns what a client would see. */
function caught(fn: () => unknown): Caught {
  let error: any;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  if (error === undefined) throw new Error('expected a rule error, but nothing was thrown');
  return { status: error.status, code: error.code, message: error.message, details: error.details ?? null };
}

const rule = (message: string, details: Record<string, unknown>): Caught => ({
  status: 400,
  code: 'VALIDATION_ERROR',
  message,
  details,
});

type ConfigCase = [label: string, config: unknown, message: string, details: Record<string, unknown>];

function expectConfigErrors(type: RequestType, cases: ConfigCase[]) {
  for (const [label, config, message, details] of cases) {
    expect([label, caught(() => normalizeConfig(type, config))]).toEqual([label, rule(message, details)]);
  }
}

const opt = (id: unknown, label: unknown, extra: Record<string, unknown> = {}) => ({ id, label, ...extra });

describe('normalizeConfig: config must be an object (every type)', () => {
  it.each(['choice', 'text_input', 'form'] as const)(
    '%s: null, arrays, strings, numbers and booleans are refused',
    (type) => {
      expectConfigErrors(
        type,
        [undefined, null, [], [{ options: [] }], 'config', 3, true].map((config): ConfigCase => [
          JSON.stringify(config) ?? 'undefined',
          config,
          'config must be a JSON object.',
          { field: 'config' },
        ]),
      );
    },
  );
});

describe('normalizeConfig: choice', () => {
  it('trims ids and labels, keeps variant only when given, drops unknown keys and fills the defaults', () => {
    const out = normalizeConfig('choice', {
      options: [
        opt('  yes ', ' Yes please\t', { variant: 'primary', color: 'green' }),
        opt('no', 'No'),
        opt('later', 'Later', { variant: 'secondary' }),
        opt('never', 'Never', { variant: 'danger' }),
      ],
      allowOther: true,
      title: 'ignored',
    });
    expect(out).toStrictEqual({
      options: [
        { id: 'yes', label: 'Yes please', variant: 'primary' },
        { id: 'no', label: 'No' },
        { id: 'later', label: 'Later', variant: 'secondary' },
        { id: 'never', label: 'Never', variant: 'danger' },
      ],
      maxSelections: 1,
      minSelections: 0,
    });
  });

  it('treats null optional keys as absent: variant, maxSelections and minSelections', () => {
    expect(
      normalizeConfig('choice', {
        options: [opt('a', 'A', { variant: null })],
        maxSelections: null,
        minSelections: null,
      }),
    ).toStrictEqual({
      options: [{ id: 'a', label: 'A' }],
      maxSelections: 1,
      minSelections: 0,
    });
  });

  it('keeps explicit selection bounds, including min equal to max and min 0 with a large max', () => {
    expect(
      normalizeConfig('choice', { options: [opt('a', 'A'), opt('b', 'B')], maxSelections: 2, minSelections: 2 }),
    ).toStrictEqual({
      options: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
      ],
      maxSelections: 2,
      minSelections: 2,
    });
    expect(normalizeConfig('choice', { options: [opt('a', 'A')], maxSelections: 10, minSelections: 0 })).toStrictEqual({
      options: [{ id: 'a', label: 'A' }],
      maxSelections: 10,
      minSelections: 0,
    });
    expect(normalizeConfig('choice', { options: [opt('a', 'A')], minSelections: 1 })).toStrictEqual({
      options: [{ id: 'a', label: 'A' }],
      maxSelections: 1,
      minSelections: 1,
    });
  });

  it('does not modify the input it is given', () => {
    const input = { options: [opt(' a ', ' A ', { variant: 'danger', extra: 1 })], other: true };
    const copy = JSON.parse(JSON.stringify(input));
    normalizeConfig('choice', input);
    expect(input).toEqual(copy);
  });

  it('rejects a missing, non-array or empty options list', () => {
    const details = { field: 'config.options' };
    const message = 'choice config requires at least one option.';
    expectConfigErrors('choice', [
      ['missing', {}, message, details],
      ['null', { options: null }, message, details],
      ['empty', { options: [] }, message, details],
      ['object', { options: { id: 'a', label: 'A' } }, message, details],
      ['string', { options: 'a,b' }, message, details],
    ]);
  });

  it('rejects an option that is not an object, naming its index', () => {
    expectConfigErrors('choice', [
      ['string at 0', { options: ['yes'] }, 'config.options[0] must be a JSON object.', { field: 'config.options[0]' }],
      [
        'null at 1',
        { options: [opt('a', 'A'), null] },
        'config.options[1] must be a JSON object.',
        { field: 'config.options[1]' },
      ],
      [
        'array at 2',
        { options: [opt('a', 'A'), opt('b', 'B'), ['c']] },
        'config.options[2] must be a JSON object.',
        { field: 'config.options[2]' },
      ],
      ['number at 0', { options: [7] }, 'config.options[0] must be a JSON object.', { field: 'config.options[0]' }],
    ]);
  });

  it('rejects option ids and labels that are not strings or are blank', () => {
    expectConfigErrors('choice', [
      [
        'id missing',
        { options: [{ label: 'A' }] },
        'config.options[0].id must be a string.',
        { field: 'config.options[0].id' },
      ],
      [
        'id number',
        { options: [opt('a', 'A'), opt(2, 'B')] },
        'config.options[1].id must be a string.',
        { field: 'config.options[1].id' },
      ],
      [
        'id null',
        { options: [opt(null, 'A')] },
        'config.options[0].id must be a string.',
        { field: 'config.options[0].id' },
      ],
      [
        'id empty',
        { options: [opt('', 'A')] },
        'config.options[0].id cannot be empty.',
        { field: 'config.options[0].id' },
      ],
      [
        'id blank',
        { options: [opt('a', 'A'), opt(' \t\n', 'B')] },
        'config.options[1].id cannot be empty.',
        { field: 'config.options[1].id' },
      ],
      [
        'label missing',
        { options: [{ id: 'a' }] },
        'config.options[0].label must be a string.',
        { field: 'config.options[0].label' },
      ],
      [
        'label boolean',
        { options: [opt('a', true)] },
        'config.options[0].label must be a string.',
        { field: 'config.options[0].label' },
      ],
      [
        'label blank',
        { options: [opt('a', 'A'), opt('b', '   ')] },
        'config.options[1].label cannot be empty.',
        { field: 'config.options[1].label' },
      ],
    ]);
  });

  it('rejects a variant outside primary, secondary, danger', () => {
    const message = 'option.variant must be one of primary, secondary, danger.';
    expectConfigErrors('choice', [
      [
        'warning',
        { options: [opt('a', 'A', { variant: 'warning' })] },
        message,
        { field: 'config.options[0].variant' },
      ],
      [
        'case',
        { options: [opt('a', 'A'), opt('b', 'B', { variant: 'Primary' })] },
        message,
        { field: 'config.options[1].variant' },
      ],
      ['empty', { options: [opt('a', 'A', { variant: '' })] }, message, { field: 'config.options[0].variant' }],
      ['number', { options: [opt('a', 'A', { variant: 1 })] }, message, { field: 'config.options[0].variant' }],
    ]);
  });

  it('rejects duplicate option ids, compared after trimming, naming the id', () => {
    const message = 'choice options must have unique ids.';
    expectConfigErrors('choice', [
      [
        'exact',
        { options: [opt('a', 'A'), opt('b', 'B'), opt('a', 'Again')] },
        message,
        { field: 'config.options', optionId: 'a' },
      ],
      [
        'trimmed',
        { options: [opt('yes', 'Yes'), opt(' yes ', 'Yes too')] },
        message,
        { field: 'config.options', optionId: 'yes' },
      ],
    ]);
    // Ids are case-sensitive: these are distinct.
    expect((normalizeConfig('choice', { options: [opt('a', 'A'), opt('A', 'A')] }) as any).options).toHaveLength(2);
  });

  it('rejects selection bounds that are not integers in range, and min above max', () => {
    const options = [opt('a', 'A'), opt('b', 'B'), opt('c', 'C')];
    const max = ruleOn('config.maxSelections', 'config.maxSelections must be an integer >= 1.');
    const min = ruleOn('config.minSelections', 'config.minSelections must be an integer >= 0.');
    const order = ruleOn('config.minSelections', 'config.minSelections cannot be greater than config.maxSelections.');
    expectConfigErrors('choice', [
      ['max 0', { options, maxSelections: 0 }, ...max],
      ['max -1', { options, maxSelections: -1 }, ...max],
      ['max 1.5', { options, maxSelections: 1.5 }, ...max],
      ['max "2"', { options, maxSelections: '2' }, ...max],
      ['max true', { options, maxSelections: true }, ...max],
      ['max []', { options, maxSelections: [] }, ...max],
      ['min -1', { options, minSelections: -1 }, ...min],
      ['min 0.5', { options, minSelections: 0.5 }, ...min],
      ['min "0"', { options, minSelections: '0' }, ...min],
      ['min false', { options, minSelections: false }, ...min],
      ['min 2 > default max 1', { options, minSelections: 2 }, ...order],
      ['min 3 > max 2', { options, minSelections: 3, maxSelections: 2 }, ...order],
    ]);
  });
});

describe('normalizeConfig: text_input', () => {
  it('accepts an empty object and returns an empty object', () => {
    expect(normalizeConfig('text_input', {})).toStrictEqual({});
  });

  it('keeps placeholder and the given validation keys, dropping unknown keys', () => {
    expect(
      normalizeConfig('text_input', {
        placeholder: '  Your answer… ',
        validation: { minLength: 0, maxLength: 10, pattern: '^[a-z]+$', flags: 'i' },
        multiline: true,
      }),
    ).toStrictEqual({
      placeholder: '  Your answer… ',
      validation: { minLength: 0, maxLength: 10, pattern: '^[a-z]+$' },
    });
    expect(normalizeConfig('text_input', { validation: { maxLength: 1 } })).toStrictEqual({
      validation: { maxLength: 1 },
    });
    expect(normalizeConfig('text_input', { validation: { minLength: 3, maxLength: 3 } })).toStrictEqual({
      validation: { minLength: 3, maxLength: 3 },
    });
    expect(normalizeConfig('text_input', { placeholder: '' })).toStrictEqual({ placeholder: '' });
  });

  it('keeps a null pattern, and treats null optional keys as absent', () => {
    expect(normalizeConfig('text_input', { validation: { pattern: null } })).toStrictEqual({
      validation: { pattern: null },
    });
    expect(normalizeConfig('text_input', { placeholder: null, validation: null })).toStrictEqual({});
    expect(
      normalizeConfig('text_input', { validation: { minLength: null, maxLength: null, pattern: null } }),
    ).toStrictEqual({
      validation: { pattern: null },
    });
  });

  it('rejects a placeholder that is not a string', () => {
    const rule = ruleOn('config.placeholder', 'config.placeholder must be a string.');
    expectConfigErrors('text_input', [
      ['number', { placeholder: 5 }, ...rule],
      ['object', { placeholder: {} }, ...rule],
      ['boolean', { placeholder: false }, ...rule],
    ]);
  });

  it('rejects a validation that is not an object', () => {
    const rule = ruleOn('config.validation', 'config.validation must be a JSON object.');
    expectConfigErrors('text_input', [
      ['string', { validation: 'strict' }, ...rule],
      ['array', { validation: [] }, ...rule],
      ['number', { validation: 3 }, ...rule],
      ['boolean', { validation: true }, ...rule],
    ]);
  });

  it('rejects lengths that are not integers in range, and minLength above maxLength', () => {
    const min = ruleOn('config.validation.minLength', 'config.validation.minLength must be an integer >= 0.');
    const max = ruleOn('config.validation.maxLength', 'config.validation.maxLength must be an integer >= 1.');
    expectConfigErrors('text_input', [
      ['min -1', { validation: { minLength: -1 } }, ...min],
      ['min 1.5', { validation: { minLength: 1.5 } }, ...min],
      ['min "2"', { validation: { minLength: '2' } }, ...min],
      ['min true', { validation: { minLength: true } }, ...min],
      ['max 0', { validation: { maxLength: 0 } }, ...max],
      ['max -3', { validation: { maxLength: -3 } }, ...max],
      ['max 2.5', { validation: { maxLength: 2.5 } }, ...max],
      ['max "10"', { validation: { maxLength: '10' } }, ...max],
      [
        'min > max',
        { validation: { minLength: 5, maxLength: 4 } },
        'config.validation.minLength cannot exceed maxLength.',
        { field: 'config.validation.minLength' },
      ],
    ]);
  });

  it('rejects a pattern that is neither a string nor null, or does not compile', () => {
    const type = ruleOn('config.validation.pattern', 'config.validation.pattern must be a string or null.');
    const invalid = ruleOn(
      'config.validation.pattern',
      'config.validation.pattern must be a valid regular expression.',
    );
    expectConfigErrors('text_input', [
      ['number', { validation: { pattern: 5 } }, ...type],
      ['object', { validation: { pattern: {} } }, ...type],
      ['boolean', { validation: { pattern: true } }, ...type],
      ['array', { validation: { pattern: ['a'] } }, ...type],
      ['open group', { validation: { pattern: '(abc' } }, ...invalid],
      ['open class', { validation: { pattern: '[a-' } }, ...invalid],
      ['dangling quantifier', { validation: { pattern: '*a' } }, ...invalid],
    ]);
    // A string pattern only has to compile as an ECMAScript regex.
    expect(normalizeConfig('text_input', { validation: { pattern: '(?<year>\\d{4})-\\d\\d' } })).toStrictEqual({
      validation: { pattern: '(?<year>\\d{4})-\\d\\d' },
    });
  });
});

describe('normalizeConfig: form', () => {
  it('trims names and options, keeps label/required/options only when given, and drops unknown keys', () => {
    const out = normalizeConfig('form', {
      fields: [
        { name: '  email ', type: 'text', label: '  E-mail ', required: true, placeholder: 'dropped' },
        { name: 'bio', type: 'textarea', required: false },
        { name: 'color', type: 'select', options: [' red ', 'green'], label: 'Color' },
        { name: 'tags', type: 'multiselect', options: ['x', '  y'] },
        { name: 'agree', type: 'checkbox', required: true },
        { name: 'due', type: 'date', label: null, required: null, options: null },
      ],
      submitLabel: ' Send it ',
      layout: 'grid',
    });
    expect(out).toStrictEqual({
      fields: [
        { name: 'email', type: 'text', label: '  E-mail ', required: true },
        { name: 'bio', type: 'textarea', required: false },
        { name: 'color', type: 'select', options: ['red', 'green'], label: 'Color' },
        { name: 'tags', type: 'multiselect', options: ['x', 'y'] },
        { name: 'agree', type: 'checkbox', required: true },
        { name: 'due', type: 'date' },
      ],
      submitLabel: ' Send it ',
    });
  });

  it('omits submitLabel when absent or null, and keeps an empty label', () => {
    expect(
      normalizeConfig('form', { fields: [{ name: 'a', type: 'text', label: '' }], submitLabel: null }),
    ).toStrictEqual({
      fields: [{ name: 'a', type: 'text', label: '' }],
    });
  });

  it('rejects a missing, non-array or empty fields list', () => {
    const rule = ruleOn('config.fields', 'form config requires at least one field.');
    expectConfigErrors('form', [
      ['missing', {}, ...rule],
      ['null', { fields: null }, ...rule],
      ['empty', { fields: [] }, ...rule],
      ['object', { fields: { name: 'a', type: 'text' } }, ...rule],
    ]);
  });

  it('rejects a field that is not an object, and a name that is not a string or is blank', () => {
    const ok = { name: 'ok', type: 'text' };
    expectConfigErrors('form', [
      ['string', { fields: ['name'] }, 'config.fields[0] must be a JSON object.', { field: 'config.fields[0]' }],
      ['null at 1', { fields: [ok, null] }, 'config.fields[1] must be a JSON object.', { field: 'config.fields[1]' }],
      ['array at 1', { fields: [ok, []] }, 'config.fields[1] must be a JSON object.', { field: 'config.fields[1]' }],
      [
        'name missing',
        { fields: [{ type: 'text' }] },
        'config.fields[0].name must be a string.',
        { field: 'config.fields[0].name' },
      ],
      [
        'name number',
        { fields: [ok, { name: 3, type: 'text' }] },
        'config.fields[1].name must be a string.',
        { field: 'config.fields[1].name' },
      ],
      [
        'name empty',
        { fields: [{ name: '', type: 'text' }] },
        'config.fields[0].name cannot be empty.',
        { field: 'config.fields[0].name' },
      ],
      [
        'name blank',
        { fields: [ok, { name: '  ', type: 'text' }] },
        'config.fields[1].name cannot be empty.',
        { field: 'config.fields[1].name' },
      ],
    ]);
  });

  it('rejects an unknown or missing field type', () => {
    const message = 'form field type must be text, textarea, select, multiselect, checkbox, or date.';
    expectConfigErrors('form', [
      ['number', { fields: [{ name: 'a', type: 'number' }] }, message, { field: 'config.fields[0].type' }],
      [
        'missing',
        { fields: [{ name: 'a', type: 'text' }, { name: 'b' }] },
        message,
        { field: 'config.fields[1].type' },
      ],
      ['case', { fields: [{ name: 'a', type: 'Text' }] }, message, { field: 'config.fields[0].type' }],
      [
        'radio',
        { fields: [{ name: 'a', type: 'radio', options: ['x'] }] },
        message,
        { field: 'config.fields[0].type' },
      ],
    ]);
  });

  it('rejects duplicate names, compared after trimming, naming the duplicate', () => {
    const message = 'form fields must have unique names.';
    expectConfigErrors('form', [
      [
        'exact',
        {
          fields: [
            { name: 'a', type: 'text' },
            { name: 'a', type: 'date' },
          ],
        },
        message,
        { field: 'config.fields', name: 'a' },
      ],
      [
        'trimmed',
        {
          fields: [
            { name: 'x', type: 'text' },
            { name: 'email', type: 'text' },
            { name: ' email', type: 'checkbox' },
          ],
        },
        message,
        { field: 'config.fields', name: 'email' },
      ],
    ]);
  });

  it('rejects a label that is not a string and a required that is not a boolean', () => {
    expectConfigErrors('form', [
      [
        'label number',
        { fields: [{ name: 'a', type: 'text', label: 1 }] },
        'config.fields[0].label must be a string.',
        { field: 'config.fields[0].label' },
      ],
      [
        'label object at 1',
        {
          fields: [
            { name: 'a', type: 'text' },
            { name: 'b', type: 'date', label: {} },
          ],
        },
        'config.fields[1].label must be a string.',
        { field: 'config.fields[1].label' },
      ],
      [
        'required "yes"',
        { fields: [{ name: 'a', type: 'text', required: 'yes' }] },
        'form field required must be a boolean.',
        { field: 'config.fields[0].required' },
      ],
      [
        'required 1',
        { fields: [{ name: 'a', type: 'checkbox', required: 1 }] },
        'form field required must be a boolean.',
        { field: 'config.fields[0].required' },
      ],
    ]);
  });

  it('requires non-empty string options for select and multiselect', () => {
    const message = 'select and multiselect fields require non-empty string options.';
    const cases: ConfigCase[] = [];
    for (const type of ['select', 'multiselect']) {
      for (const [label, options] of [
        ['missing', undefined],
        ['null', null],
        ['empty', []],
        ['empty string', ['a', '']],
        ['blank string', ['  ']],
        ['number', ['a', 2]],
        ['string instead of array', 'a,b'],
      ] as const) {
        const field: Record<string, unknown> = { name: 'f', type };
        if (options !== undefined) field.options = options;
        cases.push([
          `${type} ${label}`,
          { fields: [{ name: 'first', type: 'text' }, field] },
          message,
          { field: 'config.fields[1].options' },
        ]);
      }
    }
    expectConfigErrors('form', cases);
  });

  it('forbids options on every other field type, even an empty list', () => {
    const message = 'options are only supported for select or multiselect fields.';
    expectConfigErrors(
      'form',
      ['text', 'textarea', 'checkbox', 'date'].flatMap((type): ConfigCase[] => [
        [
          `${type} with options`,
          { fields: [{ name: 'f', type, options: ['a'] }] },
          message,
          { field: 'config.fields[0].options' },
        ],
        [
          `${type} with []`,
          { fields: [{ name: 'f', type, options: [] }] },
          message,
          { field: 'config.fields[0].options' },
        ],
      ]),
    );
  });

  it('rejects a submitLabel that is not a string', () => {
    const fields = [{ name: 'a', type: 'text' }];
    expectConfigErrors('form', [
      ['number', { fields, submitLabel: 1 }, 'config.submitLabel must be a string.', { field: 'config.submitLabel' }],
      [
        'array',
        { fields, submitLabel: ['Go'] },
        'config.submitLabel must be a string.',
        { field: 'config.submitLabel' },
      ],
    ]);
  });
});

type ResolutionCase = [
  label: string,
  input: Record<string, unknown>,
  message: string,
  details: Record<string, unknown>,
];

function expectResolutionErrors(type: RequestType, config: RequestConfig, cases: ResolutionCase[]) {
  for (const [label, input, message, details] of cases) {
    expect([label, caught(() => normalizeResolution(type, config, input))]).toEqual([label, rule(message, details)]);
  }
}

describe('normalizeConfig: its answers are the shapes of model/request-config.ts', () => {
  // The schema the OpenAPI document shows and the core's types come from: whatever the rules
  // accept and normalize must parse under it unchanged (no key it lacks, none it would add).
  const cases: [RequestType, unknown, { parse(v: unknown): unknown }][] = [
    [
      'choice',
      { options: [opt(' a ', 'A', { variant: 'danger', x: 1 }), opt('b', 'B', { variant: null })] },
      ChoiceConfig,
    ],
    ['choice', { options: [opt('a', 'A')], maxSelections: 3, minSelections: 2 }, ChoiceConfig],
    ['text_input', {}, TextInputConfig],
    ['text_input', { placeholder: 'p', validation: { minLength: 1, maxLength: 9, pattern: null } }, TextInputConfig],
    ['text_input', { validation: { pattern: '^a', minLength: null } }, TextInputConfig],
    [
      'form',
      {
        fields: [
          { name: ' n ', type: 'select', options: [' x '], label: 'L', required: true },
          { name: 'c', type: 'checkbox', label: null },
        ],
        submitLabel: 'Go',
      },
      FormConfig,
    ],
  ];
  it.each(cases)('%s %j', (type, config, schema) => {
    const out = normalizeConfig(type, config);
    expect(schema.parse(out)).toStrictEqual(out);
  });
});

describe('normalizeResolution: choice', () => {
  const config = normalizeConfig('choice', {
    options: [opt('a', 'A'), opt('b', 'B'), opt('c', 'C')],
    minSelections: 1,
    maxSelections: 2,
  });

  it('returns only selectedOptionIds, in the given order', () => {
    expect(
      normalizeResolution('choice', config, {
        selectedOptionIds: ['c', 'a'],
        resolvedBy: 'backend',
        text: 'x',
        values: {},
      }),
    ).toStrictEqual({
      selectedOptionIds: ['c', 'a'],
    });
    expect(normalizeResolution('choice', config, { selectedOptionIds: ['b'] })).toStrictEqual({
      selectedOptionIds: ['b'],
    });
  });

  it('accepts an empty selection when minSelections is 0', () => {
    const optional = normalizeConfig('choice', { options: [opt('a', 'A')] });
    expect(normalizeResolution('choice', optional, { selectedOptionIds: [] })).toStrictEqual({ selectedOptionIds: [] });
  });

  it('rejects anything but an array of strings', () => {
    const rule = ruleOn('selectedOptionIds', 'choice resolution requires selectedOptionIds string array.');
    expectResolutionErrors('choice', config, [
      ['missing', {}, ...rule],
      ['null', { selectedOptionIds: null }, ...rule],
      ['string', { selectedOptionIds: 'a' }, ...rule],
      ['numbers', { selectedOptionIds: ['a', 1] }, ...rule],
      ['object', { selectedOptionIds: { 0: 'a' } }, ...rule],
      ['nested', { selectedOptionIds: [['a']] }, ...rule],
    ]);
  });

  it('rejects duplicates, unknown options and counts outside the bounds, with their details', () => {
    expectResolutionErrors('choice', config, [
      [
        'duplicate',
        { selectedOptionIds: ['a', 'a'] },
        'selectedOptionIds must be unique.',
        { field: 'selectedOptionIds' },
      ],
      [
        'unknown',
        { selectedOptionIds: ['a', 'zz'] },
        'selectedOptionIds contains unknown option.',
        { field: 'selectedOptionIds', optionId: 'zz' },
      ],
      [
        'label not id',
        { selectedOptionIds: ['A'] },
        'selectedOptionIds contains unknown option.',
        { field: 'selectedOptionIds', optionId: 'A' },
      ],
      [
        'too few',
        { selectedOptionIds: [] },
        'selectedOptionIds does not satisfy minimum selections.',
        { field: 'selectedOptionIds', minSelections: 1 },
      ],
      [
        'too many',
        { selectedOptionIds: ['a', 'b', 'c'] },
        'selectedOptionIds exceeds maximum selections.',
        { field: 'selectedOptionIds', maxSelections: 2 },
      ],
    ]);
    const single = normalizeConfig('choice', { options: [opt('a', 'A'), opt('b', 'B')] });
    expectResolutionErrors('choice', single, [
      [
        'default max 1',
        { selectedOptionIds: ['a', 'b'] },
        'selectedOptionIds exceeds maximum selections.',
        { field: 'selectedOptionIds', maxSelections: 1 },
      ],
    ]);
  });
});

describe('normalizeResolution: text_input', () => {
  const plain = normalizeConfig('text_input', {});

  it('returns the trimmed text only', () => {
    expect(
      normalizeResolution('text_input', plain, {
        text: '  hello world \n',
        selectedOptionIds: ['x'],
        resolvedBy: 'user',
      }),
    ).toStrictEqual({
      text: 'hello world',
    });
  });

  it('rejects text that is missing, not a string, or blank after trimming', () => {
    const rule = ruleOn('text', 'text_input resolution requires non-empty text.');
    expectResolutionErrors('text_input', plain, [
      ['missing', {}, ...rule],
      ['null', { text: null }, ...rule],
      ['number', { text: 42 }, ...rule],
      ['array', { text: ['a'] }, ...rule],
      ['empty', { text: '' }, ...rule],
      ['blank', { text: ' \t\n ' }, ...rule],
    ]);
  });

  it('checks the trimmed text against minLength and maxLength', () => {
    const bounded = normalizeConfig('text_input', { validation: { minLength: 3, maxLength: 5 } });
    expect(normalizeResolution('text_input', bounded, { text: '   abc   ' })).toStrictEqual({ text: 'abc' });
    expect(normalizeResolution('text_input', bounded, { text: '  abcde  ' })).toStrictEqual({ text: 'abcde' });
    expectResolutionErrors('text_input', bounded, [
      [
        'padded short',
        { text: '   ab      ' },
        'text is shorter than minimum length.',
        { field: 'text', minLength: 3 },
      ],
      ['long', { text: 'abcdef' }, 'text is longer than maximum length.', { field: 'text', maxLength: 5 }],
    ]);
  });

  it('counts lengths in UTF-16 code units', () => {
    // '😀' is one code point but two UTF-16 code units; 'é' (U+00E9) is one.
    const max3 = normalizeConfig('text_input', { validation: { maxLength: 3 } });
    expectResolutionErrors('text_input', max3, [
      ['two emoji', { text: '😀😀' }, 'text is longer than maximum length.', { field: 'text', maxLength: 3 }],
    ]);
    expect(normalizeResolution('text_input', max3, { text: 'ééé' })).toStrictEqual({ text: 'ééé' });
    const min4 = normalizeConfig('text_input', { validation: { minLength: 4 } });
    expect(normalizeResolution('text_input', min4, { text: '😀😀' })).toStrictEqual({ text: '😀😀' });
    expectResolutionErrors('text_input', min4, [
      ['one emoji + 1', { text: '😀a' }, 'text is shorter than minimum length.', { field: 'text', minLength: 4 }],
    ]);
  });

  it('searches the trimmed text for the pattern, unanchored and case-sensitive', () => {
    const contains = normalizeConfig('text_input', { validation: { pattern: 'b+c' } });
    expect(normalizeResolution('text_input', contains, { text: 'xxabbbcxx' })).toStrictEqual({ text: 'xxabbbcxx' });
    expectResolutionErrors('text_input', contains, [
      ['no match', { text: 'abd' }, 'text does not match required pattern.', { field: 'text' }],
      ['case', { text: 'ABC' }, 'text does not match required pattern.', { field: 'text' }],
    ]);
    const anchored = normalizeConfig('text_input', { validation: { pattern: '^\\d+$' } });
    expect(normalizeResolution('text_input', anchored, { text: '  12345 ' })).toStrictEqual({ text: '12345' });
    expectResolutionErrors('text_input', anchored, [
      ['letters', { text: '12a45' }, 'text does not match required pattern.', { field: 'text' }],
    ]);
  });

  it('applies no pattern when the pattern is null', () => {
    const nullPattern = normalizeConfig('text_input', { validation: { pattern: null } });
    expect(normalizeResolution('text_input', nullPattern, { text: 'anything at all' })).toStrictEqual({
      text: 'anything at all',
    });
  });
});

describe('normalizeResolution: form', () => {
  const config = normalizeConfig('form', {
    fields: [
      { name: 'name', type: 'text', required: true },
      { name: 'bio', type: 'textarea' },
      { name: 'color', type: 'select', options: ['red', 'green'], required: true },
      { name: 'tags', type: 'multiselect', options: ['x', 'y', 'z'] },
      { name: 'agree', type: 'checkbox', required: true },
      { name: 'due', type: 'date' },
    ],
  });
  const valid = { name: 'Ann', color: 'red', agree: true };

  it('returns only values, with optional fields omitted', () => {
    expect(normalizeResolution('form', config, { values: valid, text: 'dropped', resolvedBy: 'user' })).toStrictEqual({
      values: valid,
    });
    const full = { name: 'Ann', bio: 'Hi', color: 'green', tags: ['z', 'x'], agree: true, due: '2025-05-01' };
    expect(normalizeResolution('form', config, { values: full })).toStrictEqual({ values: full });
  });

  it('accepts false for a required checkbox, and an empty optional text or multiselect', () => {
    expect(normalizeResolution('form', config, { values: { ...valid, agree: false } })).toStrictEqual({
      values: { ...valid, agree: false },
    });
    expect(normalizeResolution('form', config, { values: { ...valid, bio: '', tags: [] } })).toStrictEqual({
      values: { ...valid, bio: '', tags: [] },
    });
  });

  it('rejects values that are not an object, and unknown field names', () => {
    const rule = ruleOn('values', 'form resolution requires values object.');
    expectResolutionErrors('form', config, [
      ['missing', {}, ...rule],
      ['null', { values: null }, ...rule],
      ['array', { values: [valid] }, ...rule],
      ['string', { values: 'name=Ann' }, ...rule],
      [
        'unknown',
        { values: { ...valid, nickname: 'A' } },
        'values contains unknown field.',
        { field: 'values', name: 'nickname' },
      ],
    ]);
  });

  it('checks each value against its field type', () => {
    expectResolutionErrors('form', config, [
      [
        'checkbox string',
        { values: { ...valid, agree: 'true' } },
        'checkbox fields require boolean values.',
        { field: 'values.agree' },
      ],
      [
        'checkbox number',
        { values: { ...valid, agree: 1 } },
        'checkbox fields require boolean values.',
        { field: 'values.agree' },
      ],
      [
        'multiselect string',
        { values: { ...valid, tags: 'x' } },
        'multiselect fields require string array values.',
        { field: 'values.tags' },
      ],
      [
        'multiselect numbers',
        { values: { ...valid, tags: ['x', 1] } },
        'multiselect fields require string array values.',
        { field: 'values.tags' },
      ],
      [
        'multiselect unknown',
        { values: { ...valid, tags: ['x', 'q'] } },
        'multiselect values contain unknown option.',
        { field: 'values.tags' },
      ],
      ['text number', { values: { ...valid, name: 5 } }, 'field value must be a string.', { field: 'values.name' }],
      [
        'textarea array',
        { values: { ...valid, bio: ['a'] } },
        'field value must be a string.',
        { field: 'values.bio' },
      ],
      ['date boolean', { values: { ...valid, due: true } }, 'field value must be a string.', { field: 'values.due' }],
      ['select number', { values: { ...valid, color: 1 } }, 'field value must be a string.', { field: 'values.color' }],
      [
        'select unknown',
        { values: { ...valid, color: 'blue' } },
        'select value must match one of the configured options.',
        { field: 'values.color' },
      ],
    ]);
  });

  it('requires required fields to be present and non-empty', () => {
    const { name: _name, ...noName } = valid;
    const { agree: _agree, ...noAgree } = valid;
    expectResolutionErrors('form', config, [
      ['no name', { values: noName }, 'missing required form value.', { field: 'values.name' }],
      ['no checkbox', { values: noAgree }, 'missing required form value.', { field: 'values.agree' }],
      [
        'empty name',
        { values: { ...valid, name: '' } },
        'required form value cannot be empty.',
        { field: 'values.name' },
      ],
      [
        'blank name',
        { values: { ...valid, name: '  \n ' } },
        'required form value cannot be empty.',
        { field: 'values.name' },
      ],
    ]);
    const requiredList = normalizeConfig('form', {
      fields: [
        { name: 'picks', type: 'multiselect', options: ['a', 'b'], required: true },
        { name: 'note', type: 'textarea', required: true },
      ],
    });
    expectResolutionErrors('form', requiredList, [
      [
        'empty multiselect',
        { values: { picks: [], note: 'n' } },
        'required form value cannot be empty.',
        { field: 'values.picks' },
      ],
      ['missing multiselect', { values: { note: 'n' } }, 'missing required form value.', { field: 'values.picks' }],
    ]);
    expect(normalizeResolution('form', requiredList, { values: { picks: ['b'], note: 'n' } })).toStrictEqual({
      values: { picks: ['b'], note: 'n' },
    });
  });

  it('accepts an empty values object when nothing is required', () => {
    const optional = normalizeConfig('form', {
      fields: [
        { name: 'a', type: 'text' },
        { name: 'b', type: 'checkbox', required: false },
      ],
    });
    expect(normalizeResolution('form', optional, { values: {} })).toStrictEqual({ values: {} });
  });
});
