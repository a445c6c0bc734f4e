/**
 * A request that was answered or cancelled, kept in the history where it was asked (issue 33 item
 * 14): a compact read-only card with its title and body, and the answer as the person gave it (the
 * chosen options' labels, the text, the form's values by field label) or "Cancelled", with the time
 * it closed. MessageList places it among the messages by the request's `created_at`.
 */
import { memo } from 'react';
import type { ChatRequest, FormValue } from '../api/types';
import { clockTime, fullTime } from '../shared/time';
import { expiredOutcome } from './Deadline';

export const RequestRecord = memo(function RequestRecord({ request }: { request: ChatRequest }) {
  const cancelled = request.status === 'cancelled';
  // A cancel leaves resolved_at null; a deadline's cancel still says when (expired_at).
  const closedAt = request.resolved_at ?? request.expired_at;
  const expired = request.expired_at !== null && request.expired_at !== undefined;
  return (
    <article
      className={`request-record ${request.status}`}
      data-testid="request-record"
      data-request-id={request.id}
      data-request-type={request.type}
      data-status={request.status}
      data-expired={expired || undefined}
      aria-label={`Request “${request.title}”, ${expired ? 'expired' : cancelled ? 'cancelled' : 'answered'}`}
    >
      <header className="message-meta">
        <span className="sender">Request</span>
        <time dateTime={request.created_at} title={fullTime(request.created_at)}>
          {clockTime(request.created_at)}
        </time>
      </header>
      <p className="request-record-title">{request.title}</p>
      {request.body && <p className="request-body">{request.body}</p>}
      <div className="request-outcome" data-testid="request-outcome">
        <span className="request-outcome-label">
          {expired ? expiredOutcome(request) : cancelled ? 'Cancelled' : 'Answered'}
          {closedAt && (
            <>
              {' '}
              <time dateTime={closedAt} title={fullTime(closedAt)}>
                {clockTime(closedAt)}
              </time>
            </>
          )}
        </span>
        {!cancelled && !expired && <Answer request={request} />}
      </div>
    </article>
  );
});

function Answer({ request }: { request: ChatRequest }) {
  const payload = request.resolution_payload ?? {};
  if (request.type === 'choice') {
    const ids = Array.isArray(payload.selectedOptionIds) ? (payload.selectedOptionIds as string[]) : [];
    const labels = ids.map((id) => request.config.options.find((o) => o.id === id)?.label ?? id);
    return (
      <p className="request-answer" data-testid="request-answer">
        {labels.length ? labels.join(', ') : 'Nothing chosen'}
      </p>
    );
  }
  if (request.type === 'text_input') {
    return (
      <p className="request-answer text" data-testid="request-answer">
        {typeof payload.text === 'string' ? payload.text : ''}
      </p>
    );
  }
  const values = (payload.values ?? {}) as Record<string, FormValue>;
  return (
    <dl className="request-answer form" data-testid="request-answer">
      {request.config.fields
        .filter((field) => field.name in values)
        .map((field) => (
          <div key={field.name}>
            <dt>{field.label || field.name}</dt>
            <dd>{formValue(values[field.name]!)}</dd>
          </div>
        ))}
    </dl>
  );
}

function formValue(value: FormValue): string {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (Array.isArray(value)) return value.length ? value.join(', ') : '—';
  return value || '—';
}
