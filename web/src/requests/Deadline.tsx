/**
 * A request's deadline (§5.5.6) as a card shows it: when it closes, a live countdown, and what
 * happens then ("Hold will be applied", "Will be cancelled"); and once a deadline closed it, what
 * was done ("Expired: Hold applied", "Expired: cancelled").
 */
import type { ChatRequest, FormValue } from '../api/types';
import { countdown, useNow } from '../shared/now';
import { clockTime, fullTime } from '../shared/time';

/** A resolution payload in words: the chosen options' labels, the text, or the form's values. */
export function payloadLabel(request: ChatRequest, payload: Record<string, unknown> | null | undefined): string {
  const p = payload ?? {};
  if (request.type === 'choice') {
    const ids = Array.isArray(p.selectedOptionIds) ? (p.selectedOptionIds as string[]) : [];
    const labels = ids.map((id) => request.config.options.find((o) => o.id === id)?.label ?? id);
    return labels.length ? labels.join(', ') : 'Nothing chosen';
  }
  if (request.type === 'text_input') return typeof p.text === 'string' ? `“${p.text}”` : 'The default answer';
  const values = (p.values ?? {}) as Record<string, FormValue>;
  const parts = request.config.fields
    .filter((field) => field.name in values)
    .map((field) => `${field.label || field.name}: ${formValue(values[field.name]!)}`);
  return parts.length ? parts.join('; ') : 'The default answer';
}

function formValue(value: FormValue): string {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (Array.isArray(value)) return value.length ? value.join(', ') : '—';
  return value || '—';
}

/** What the deadline will do: "Hold will be applied" or "Will be cancelled". */
export function defaultOutcome(request: ChatRequest): string {
  const deadline = request.deadline;
  if (!deadline) return '';
  return deadline.on_expiry === 'resolve'
    ? `${payloadLabel(request, deadline.default_payload)} will be applied`
    : 'Will be cancelled';
}

/** What the deadline did: "Expired: Hold applied" or "Expired: cancelled". */
export function expiredOutcome(request: ChatRequest): string {
  return request.status === 'resolved'
    ? `Expired: ${payloadLabel(request, request.resolution_payload)} applied`
    : 'Expired: cancelled';
}

/** The pending request's deadline line: the countdown (a timer, not announced each second) and the default. */
export function DeadlineInfo({ request }: { request: ChatRequest }) {
  const now = useNow();
  const deadline = request.deadline;
  if (!deadline || request.status !== 'pending') return null;
  const left = Date.parse(deadline.at) - now;
  const urgent = left <= 60_000;
  return (
    <p className="request-deadline" data-testid="request-deadline" data-urgent={urgent || undefined}>
      <span className="request-countdown">
        {left > 0 ? (
          <>
            Closes in{' '}
            <span role="timer" data-testid="countdown" aria-label={`Time left: ${countdown(left)}`}>
              {countdown(left)}
            </span>
          </>
        ) : (
          <span data-testid="countdown">Closing now…</span>
        )}{' '}
        <span className="request-deadline-at">
          (at{' '}
          <time dateTime={deadline.at} title={fullTime(deadline.at)}>
            {new Date(deadline.at).toDateString() === new Date(now).toDateString()
              ? clockTime(deadline.at)
              : fullTime(deadline.at)}
          </time>
          )
        </span>
      </span>
      <span className="request-default" data-testid="request-default">
        {defaultOutcome(request)}
      </span>
    </p>
  );
}

/** In the phone's folded bar: when the soonest deadline of the chat's pending requests comes. */
export function SoonestDeadline({ requests }: { requests: ChatRequest[] }) {
  const now = useNow();
  const soonest = Math.min(...requests.map((r) => (r.deadline ? Date.parse(r.deadline.at) : Infinity)));
  if (!Number.isFinite(soonest)) return null;
  return (
    <span className="requests-soonest" data-testid="soonest-deadline">
      {' '}
      · {soonest > now ? `next in ${countdown(soonest - now)}` : 'closing now'}
    </span>
  );
}
