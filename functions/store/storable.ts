/**
 * Free-form JSON (traces, a request's config and resolution, event payloads that carry them) in
 * the form the DynamoDB marshaller takes whatever its keys: every plain object becomes a Map.
 * The marshaller tells an object's type by `value.constructor.name`, so a client's key named
 * `constructor` makes it fail (`{"constructor": 1}`) or marshal the object as something else
 * (`{"constructor": {"name": "Set"}}`); a Map is marshalled from its entries, into the same `M`
 * attribute, and reads back as a plain object. The API has already refused what DynamoDB cannot
 * hold (empty keys, `__proto__` keys, numbers out of range, deep nesting: functions/http/schemas.ts
 * and middleware/validate.ts), so the recursion here is shallow.
 */
export function storable<T>(value: T): T {
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value !== null && typeof value === 'object' && isPlain(value)) {
    return new Map(Object.entries(value).map(([k, v]) => [k, storable(v)])) as T;
  }
  return value;
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
