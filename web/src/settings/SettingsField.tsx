/**
 * The settings form's field plumbing: every input gets the id its dotted path names (so a problem
 * can find it), and each field with a problem (found by the form before sending, or named by a
 * refused save) shows its message right under it, tied to the input by aria-describedby.
 */
import { createContext, useContext } from 'react';
import type { Draft } from './settings';
import { fieldId } from './settings';
import type { FieldProblem } from './settings-checks';

export type { FieldProblem };

export const ProblemContext = createContext<readonly FieldProblem[]>([]);

const problemAt = (problems: readonly FieldProblem[], path: string) => problems.find((p) => p.path === path);

/** Props that tie an input to its path: id, and when a problem is about it, aria-invalid and the message's id. */
export function useField(path: string): { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string } {
  const problem = problemAt(useContext(ProblemContext), path);
  const id = fieldId(path);
  return problem ? { id, 'aria-invalid': true, 'aria-describedby': `${id}-error` } : { id };
}

/** The message for this field, when it has a problem. */
export function FieldMessage({ path }: { path: string }) {
  const problem = problemAt(useContext(ProblemContext), path);
  if (!problem) return null;
  return (
    <p id={`${fieldId(path)}-error`} className="error field-error" data-testid="field-error" data-field={path}>
      {problem.message}
    </p>
  );
}

/** A labelled text input bound to a path. */
export function TextField({
  path,
  label,
  value,
  onChange,
  type = 'text',
  placeholder,
  list,
  autoComplete = 'off',
  multiline = false,
}: {
  path: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: 'text' | 'password' | 'url' | 'number';
  placeholder?: string;
  list?: string;
  autoComplete?: string;
  /** A multi-line field (textarea): Enter starts a new line. */
  multiline?: boolean;
}) {
  const field = useField(path);
  if (multiline) {
    return (
      <div className="field">
        <label htmlFor={field.id}>{label}</label>
        <textarea
          {...field}
          rows={3}
          value={value}
          placeholder={placeholder}
          onChange={(e) => onChange(e.target.value)}
        />
        <FieldMessage path={path} />
      </div>
    );
  }
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      <input
        {...field}
        type={type}
        value={value}
        placeholder={placeholder}
        list={list}
        autoComplete={autoComplete}
        spellCheck={false}
        onChange={(e) => onChange(e.target.value)}
      />
      <FieldMessage path={path} />
    </div>
  );
}

/** A labelled checkbox bound to a path. */
export function CheckField({
  path,
  label,
  checked,
  onChange,
  disabled,
}: {
  path: string;
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
}) {
  const field = useField(path);
  return (
    <>
      <label className="check" htmlFor={field.id}>
        <input
          {...field}
          type="checkbox"
          checked={checked}
          disabled={disabled}
          onChange={(e) => onChange(e.target.checked)}
        />
        {label}
      </label>
      <FieldMessage path={path} />
    </>
  );
}

export type Edit = (change: (draft: Draft) => Draft) => void;

/** A copy of `list` with entry `index` changed. */
export const replaceAt = <T,>(list: T[], index: number, patch: Partial<T>): T[] =>
  list.map((item, i) => (i === index ? { ...item, ...patch } : item));
