/**
 * Domain errors: each carries the contract's HTTP status and code (§1.7). Core code throws
 * them; the error-envelope middleware turns them into responses. Anything that is not an
 * AppError becomes a 500 INTERNAL_ERROR that exposes nothing.
 */
export type ErrorDetails = Record<string, unknown> | null;

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  readonly headers: Record<string, string> = {};
  constructor(
    message: string,
    readonly details: ErrorDetails = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  readonly status = 400;
  readonly code = 'VALIDATION_ERROR';
}

/** A rule violation tied to one field: details `{ field, ...extra }` (§1.7). */
export class FieldRuleError extends ValidationError {
  constructor(field: string, message: string, extra: Record<string, unknown> = {}) {
    super(message, { field, ...extra });
  }
}

/** Schema (shape/type) failure: details `{ formErrors, fieldErrors }` (§1.8). */
export class SchemaValidationError extends ValidationError {
  constructor(formErrors: string[], fieldErrors: Record<string, string[]>) {
    super('Request validation failed.', { formErrors, fieldErrors });
  }
}

export class UnauthorizedError extends AppError {
  readonly status = 401;
  readonly code = 'UNAUTHORIZED';
  constructor() {
    super('Missing or invalid instance secret.');
  }
}

/** A write authenticated by a session cookie from another origin (contract §1.11.1). */
export class ForbiddenError extends AppError {
  readonly status = 403;
  readonly code = 'FORBIDDEN';
  constructor() {
    super('Cross-site request refused.');
  }
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly code = 'NOT_FOUND';
  /** `entity` is the id's field name in details, e.g. 'chatId'. */
  static of(entity: 'chatId' | 'messageId' | 'requestId' | 'mediaId', id: string, message: string): NotFoundError {
    return new NotFoundError(message, { [entity]: id });
  }
}

export class RouteNotFoundError extends NotFoundError {
  constructor() {
    super('Not found.');
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
  readonly code = 'CONFLICT';
}

export class RateLimitedError extends AppError {
  readonly status = 429;
  readonly code = 'RATE_LIMIT_ERROR';
  constructor(retryAfterSeconds: number, message = 'Write rate limit exceeded.') {
    super(message);
    this.headers['retry-after'] = String(retryAfterSeconds);
  }
}

export class PayloadTooLargeError extends AppError {
  readonly status = 413;
  readonly code = 'PAYLOAD_TOO_LARGE';
}

export class UnsupportedMediaTypeError extends AppError {
  readonly status = 415;
  readonly code = 'UNSUPPORTED_MEDIA_TYPE';
}

/**
 * Too many concurrent writes to one item for this write to land within its time budget (a chat
 * rewritten under it again and again, or DynamoDB transaction conflicts that outlast their
 * retries). Nothing was changed; the client retries after `Retry-After` seconds. The contract's
 * only retryable status is 429 (§1.7), so it answers that, with its code and Retry-After
 * (docs/architecture.md, "Busy chats").
 */
export class BusyError extends RateLimitedError {
  constructor(retryAfterSeconds = 1) {
    super(retryAfterSeconds, 'Too many concurrent writes to this resource. Retry shortly.');
  }
}
