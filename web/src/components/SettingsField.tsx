/**
 * The settings form's field plumbing: every input gets the id its dotted path names (so a 400 can
 * find it), and the field a 400 is about shows the service's message right under it.
 */
import { createContext, useContext } from 'react';
import type { Draft } from '../state/settings';
import { fieldId } from '../state/settings';

export interface FieldProblem {
  path: string;
  message: string;
}

export const ProblemContext = createContext<FieldProblem | undefined>(undefined);

/** Props that tie an input to its path: id, and when the problem is about it, aria-invalid and the message's id. */
export function useField(path: string): { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string } {
  const problem = useContext(ProblemContext);
  const id = fieldId(path);
  return problem?.path === path ? { id, 'aria-invalid': true, 'aria-describedby': `${id}-error` } : { id };
}

/** The service's message for this field, when the last save was refused because of it. */
export function FieldMessage({ path }: { path: string }) {
  const problem = useContext(ProblemContext);
  if (problem?.path !== path) return null;
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
}: {
  path: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: 'text' | 'password' | 'url' | 'number';
  placeholder?: string;
  list?: string;
  autoComplete?: string;
}) {
  const field = useField(path);
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
