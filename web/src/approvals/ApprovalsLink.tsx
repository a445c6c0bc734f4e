/**
 * The navigation's way to the Approvals view, with the number of requests waiting for an answer
 * across every chat (the approvals query, kept live), and to the decision log.
 */
import { onLinkClick } from '../router';
import { MOST, useApprovals } from './approvals';

export function ViewLinks({ current }: { current: string }) {
  const count = useApprovals().data?.length ?? 0;
  const shown = count >= MOST ? `${MOST}+` : String(count);
  return (
    <>
      <a
        className="button view-link"
        href="/approvals"
        aria-current={current === 'approvals' ? 'page' : undefined}
        onClick={(e) => onLinkClick(e, '/approvals')}
      >
        Approvals
        {count > 0 && (
          <>
            <span className="count-badge" data-testid="approvals-badge" aria-hidden="true">
              {shown}
            </span>
            <span className="visually-hidden">, {shown} pending</span>
          </>
        )}
      </a>
      <a
        className="button view-link"
        href="/decisions"
        aria-current={current === 'decisions' ? 'page' : undefined}
        onClick={(e) => onLinkClick(e, '/decisions')}
      >
        Decisions
      </a>
    </>
  );
}
