import { nanoid } from 'nanoid';

/** Server-generated ids are 21-character nanoids (contract §1.3). */
export const newId = (): string => nanoid(21);

const ID = /^[A-Za-z0-9_-]{21}$/;
/** A path id that is not well-formed cannot exist: answer 404 without touching the table. */
export const isId = (value: string): boolean => ID.test(value);
