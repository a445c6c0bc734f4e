/**
 * The chat's pending requests, answered in the page: a choice (buttons for one option, checkboxes
 * for several), a text answer checked against the request's own validation, or a form with every
 * field type of the contract (§2.3.1). An answer is sent with an Idempotency-Key that a retry reuses;
 * a request resolved or cancelled elsewhere disappears live (web/src/requests/requests.ts).
 */
import { useId, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { ApiError, newIdempotencyKey } from '../api/client';
import type {
  ChatRequest,
  ChoiceConfig,
  FormConfig,
  FormField,
  FormValue,
  Resolution,
  TextInputConfig,
} from '../api/types';
import { messageOf } from '../api/client';
import { resolveRequest } from './requests';
import { DeadlineInfo, SoonestDeadline } from './Deadline';

export function Requests({ requests }: { requests: ChatRequest[] }) {
  // On a phone the requests fold into a bar ("N pending requests") that opens them, so the chat
  // stays readable; on a wide screen the bar is hidden and the requests always show (requests/requests.css).
  const [expanded, setExpanded] = useState(false);
  const listId = useId();
  const count = requests.length;
  return (
    <section className="requests" aria-label="Pending requests" data-expanded={expanded}>
      <button
        type="button"
        className="requests-toggle"
        aria-expanded={expanded}
        aria-controls={listId}
        onClick={() => setExpanded(!expanded)}
      >
        <span>
          {count} pending {count === 1 ? 'request' : 'requests'}
          <SoonestDeadline requests={requests} />
        </span>
        <span aria-hidden="true">{expanded ? '▾' : '▸'}</span>
      </button>
      <div className="request-list" id={listId}>
        {requests.map((request) => (
          <RequestCard key={request.id} request={request} />
        ))}
      </div>
    </section>
  );
}

/** One pending request with its answer controls (also the Approvals view's cards). */
export function RequestCard({ request }: { request: ChatRequest }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [errorField, setErrorField] = useState<string | undefined>();
  // One key per answer attempt; a retry after a lost answer reuses it (nothing resolves twice).
  const [key, setKey] = useState(newIdempotencyKey);
  const headingId = useId();

  async function answer(resolution: Resolution) {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    setErrorField(undefined);
    try {
      await resolveRequest(request, resolution, key);
    } catch (caught) {
      setError(messageOf(caught));
      if (caught instanceof ApiError && !caught.transient) {
        setKey(newIdempotencyKey());
        const field = caught.details?.field;
        if (typeof field === 'string') setErrorField(field);
      }
      setBusy(false);
    }
  }

  const shared = { busy, answer, errorField };
  return (
    <form
      className="request"
      data-testid="request"
      data-request-id={request.id}
      data-request-type={request.type}
      aria-labelledby={headingId}
      onSubmit={(e) => e.preventDefault()}
    >
      <h2 id={headingId}>{request.title}</h2>
      {request.body && <p className="request-body">{request.body}</p>}
      <DeadlineInfo request={request} />
      {request.type === 'choice' ? (
        <Choice config={request.config} {...shared} />
      ) : request.type === 'text_input' ? (
        <TextAnswer config={request.config} {...shared} />
      ) : (
        <Form config={request.config} {...shared} />
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

interface Shared {
  busy: boolean;
  answer: (resolution: Resolution) => Promise<void>;
  errorField: string | undefined;
}

function Choice({ config, busy, answer }: Shared & { config: ChoiceConfig }) {
  const [selected, setSelected] = useState<string[]>([]);
  if (config.maxSelections <= 1) {
    return (
      <div className="choice-buttons">
        {config.options.map((option) => (
          <button
            key={option.id}
            type="button"
            className={option.variant ?? 'secondary'}
            disabled={busy}
            onClick={() => void answer({ selectedOptionIds: [option.id] })}
          >
            {option.label}
          </button>
        ))}
      </div>
    );
  }
  const tooFew = selected.length < config.minSelections;
  const full = selected.length >= config.maxSelections;
  return (
    <>
      <fieldset className="choice-many">
        <legend className="hint">
          {config.minSelections > 0
            ? `Choose ${config.minSelections} to ${config.maxSelections}.`
            : `Choose up to ${config.maxSelections}.`}
        </legend>
        {config.options.map((option) => {
          const checked = selected.includes(option.id);
          return (
            <label key={option.id} className="check">
              <input
                type="checkbox"
                checked={checked}
                disabled={busy || (!checked && full)}
                onChange={() =>
                  setSelected(checked ? selected.filter((id) => id !== option.id) : [...selected, option.id])
                }
              />
              {option.label}
            </label>
          );
        })}
      </fieldset>
      <Submit busy={busy} disabled={tooFew} onClick={() => void answer({ selectedOptionIds: selected })} />
    </>
  );
}

function TextAnswer({ config, busy, answer }: Shared & { config: TextInputConfig }) {
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const id = useId();
  const { minLength, maxLength, pattern } = config.validation ?? {};

  async function submit(event?: FormEvent) {
    event?.preventDefault();
    const trimmed = text.trim();
    const issue = !trimmed
      ? 'Write an answer first.'
      : minLength !== undefined && trimmed.length < minLength
        ? `At least ${minLength} characters.`
        : maxLength !== undefined && trimmed.length > maxLength
          ? `At most ${maxLength} characters.`
          : pattern && !(await matchesPattern(pattern, trimmed))
            ? 'The answer does not have the expected format.'
            : undefined;
    setProblem(issue);
    if (!issue) void answer({ text: trimmed });
  }

  return (
    <>
      <label htmlFor={id}>Answer</label>
      <textarea
        id={id}
        value={text}
        placeholder={config.placeholder}
        maxLength={maxLength}
        disabled={busy}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) void submit();
        }}
        aria-invalid={problem ? true : undefined}
      />
      {problem && (
        <p role="alert" className="error">
          {problem}
        </p>
      )}
      <Submit busy={busy} onClick={() => void submit()} />
    </>
  );
}

/**
 * The service's own rule (functions/platform/text-pattern.ts), in linear time: an agent's pattern
 * never backtracks on the page's main thread. Loaded on first use, so its engine (re2js, ~48 KB
 * gzipped) stays out of the initial script.
 */
async function matchesPattern(pattern: string, text: string): Promise<boolean> {
  try {
    const { textMatchesPattern } = await import('../../../functions/platform/text-pattern');
    return textMatchesPattern(pattern, text);
  } catch {
    return true; // Not loaded (offline): the service checks the answer too.
  }
}

function Form({ config, busy, answer, errorField }: Shared & { config: FormConfig }) {
  const [values, setValues] = useState<Record<string, FormValue>>(() =>
    Object.fromEntries(
      config.fields.map((f) => [f.name, f.type === 'checkbox' ? false : f.type === 'multiselect' ? [] : '']),
    ),
  );
  const [missing, setMissing] = useState<string[]>([]);
  const set = (name: string, value: FormValue) => setValues((v) => ({ ...v, [name]: value }));

  function submit() {
    const empty = config.fields.filter((f) => {
      if (!f.required || f.type === 'checkbox') return false;
      const v = values[f.name];
      return Array.isArray(v) ? v.length === 0 : typeof v === 'string' ? !v.trim() : v === undefined;
    });
    setMissing(empty.map((f) => f.name));
    if (empty.length) return;
    // Optional fields left empty are omitted (the contract's select check refuses "").
    const sent: Record<string, FormValue> = {};
    for (const f of config.fields) {
      const v = values[f.name];
      if (v === undefined) continue;
      if (!f.required && (v === '' || (Array.isArray(v) && v.length === 0))) continue;
      sent[f.name] = v;
    }
    void answer({ values: sent });
  }

  return (
    <>
      <div className="fields">
        {config.fields.map((field) => (
          <Field
            key={field.name}
            field={field}
            value={values[field.name]}
            onChange={(v) => set(field.name, v)}
            disabled={busy}
            invalid={missing.includes(field.name) || errorField === `values.${field.name}`}
          />
        ))}
      </div>
      <Submit busy={busy} label={config.submitLabel} onClick={submit} />
    </>
  );
}

function Field({
  field,
  value,
  onChange,
  disabled,
  invalid,
}: {
  field: FormField;
  value: FormValue | undefined;
  onChange: (value: FormValue) => void;
  disabled: boolean;
  invalid: boolean;
}) {
  const id = useId();
  const label = field.label ?? field.name;
  const mark = field.required ? <span aria-hidden="true"> *</span> : null;
  const problem = invalid ? (
    <p role="alert" className="error">
      <bdi>{label}</bdi> is required.
    </p>
  ) : null;
  const common = { id, disabled, required: field.required, 'aria-invalid': invalid || undefined };
  let control: ReactNode;
  switch (field.type) {
    case 'checkbox':
      return (
        <div className="field">
          <label className="check" htmlFor={id}>
            <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
            <bdi>{label}</bdi>
            {mark}
          </label>
        </div>
      );
    case 'multiselect': {
      const chosen = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field" aria-invalid={invalid || undefined}>
          <legend>
            <bdi>{label}</bdi>
            {mark}
          </legend>
          {(field.options ?? []).map((option) => (
            <label key={option} className="check">
              <input
                type="checkbox"
                disabled={disabled}
                checked={chosen.includes(option)}
                onChange={(e) => onChange(e.target.checked ? [...chosen, option] : chosen.filter((o) => o !== option))}
              />
              {option}
            </label>
          ))}
          {problem}
        </fieldset>
      );
    }
    case 'select':
      control = (
        <select {...common} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value)}>
          <option value="">Choose…</option>
          {(field.options ?? []).map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      );
      break;
    case 'textarea':
      control = <textarea {...common} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />;
      break;
    case 'date':
      control = (
        <input {...common} type="date" value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />
      );
      break;
    default:
      control = (
        <input {...common} type="text" value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />
      );
  }
  return (
    <div className="field">
      <label htmlFor={id}>
        <bdi>{label}</bdi>
        {mark}
      </label>
      {control}
      {problem}
    </div>
  );
}

function Submit({
  busy,
  disabled,
  label,
  onClick,
}: {
  busy: boolean;
  disabled?: boolean;
  label?: string | undefined;
  onClick: () => void;
}) {
  return (
    <button type="button" className="primary" disabled={busy || disabled} onClick={onClick}>
      {busy ? 'Sending…' : (label ?? 'Submit')}
    </button>
  );
}
