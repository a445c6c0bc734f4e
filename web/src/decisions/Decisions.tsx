/**
 * The Decisions view (/decisions): the decision log (§5.5.6), newest first, filterable by chat;
 * Export downloads the whole log as JSON Lines (oldest first, one entry a line), and Verify reads
 * the whole log again and checks its hash chain in the browser (chain.ts).
 */
import { useId, useMemo, useState } from 'react';
import { useQueries } from '@tanstack/react-query';
import { api, messageOf } from '../api/client';
import { keys } from '../api/query-client';
import type { DecisionEntry } from '../api/types';
import { onLinkClick, pathOf } from '../router';
import { fullTime, relativeTime } from '../shared/time';
import { ViewPage } from '../shared/ViewPage';
import { checkChain, checkText } from './chain';
import type { ChainCheck } from './chain';
import { download, readLog, rereadWholeLog, useDecisions } from './decisions';

/** Entries drawn at a time; "Show older" draws more. */
const STEP = 100;

const ACTIONS: Record<DecisionEntry['action'], string> = {
  resolved: 'Answered',
  cancelled: 'Cancelled',
  expired: 'Expired',
};
const ACTORS: Record<DecisionEntry['actor'], string> = {
  session: 'from the app',
  secret: 'with the instance secret',
  open: 'on the open instance',
  deadline: 'by its deadline',
};

type Verifying = { state: 'idle' } | { state: 'running'; checked: number } | { state: 'done'; check: ChainCheck };

export function Decisions() {
  const { data, error, isPending, refetch } = useDecisions();
  const [chatId, setChatId] = useState('');
  const [shown, setShown] = useState(STEP);
  const [verifying, setVerifying] = useState<Verifying>({ state: 'idle' });
  const [problem, setProblem] = useState<string | undefined>();
  const filterId = useId();

  const entries = data?.entries;
  const chatIds = useMemo(() => [...new Set((entries ?? []).map((e) => e.chat_id))], [entries]);
  const titles = useChatTitles(chatIds);
  const newestFirst = useMemo(
    () => (entries ?? []).filter((e) => !chatId || e.chat_id === chatId).reverse(),
    [entries, chatId],
  );

  async function verify() {
    setProblem(undefined);
    setVerifying({ state: 'running', checked: 0 });
    try {
      const log = await rereadWholeLog();
      const check = await checkChain(log.entries, (checked) => setVerifying({ state: 'running', checked }));
      setVerifying({ state: 'done', check });
    } catch (caught) {
      setVerifying({ state: 'idle' });
      setProblem(`Could not read the log: ${messageOf(caught)}`);
    }
  }

  async function exportLog() {
    setProblem(undefined);
    try {
      // What followed the last read, then the whole log, oldest first.
      download((await readLog(entries)).entries);
    } catch (caught) {
      setProblem(`Could not read the log: ${messageOf(caught)}`);
    }
  }

  return (
    <ViewPage name="decisions" title="Decisions" busy={isPending}>
      <div className="decisions-tools">
        <div className="decisions-filter">
          <label htmlFor={filterId}>Chat</label>
          <select id={filterId} value={chatId} onChange={(e) => (setChatId(e.target.value), setShown(STEP))}>
            <option value="">All chats</option>
            {chatIds.map((id) => (
              <option key={id} value={id}>
                {titles.get(id) ?? id}
              </option>
            ))}
          </select>
        </div>
        <div className="decisions-actions">
          <button type="button" onClick={() => void exportLog()} disabled={!entries}>
            Export
          </button>
          <button type="button" onClick={() => void verify()} disabled={verifying.state === 'running'}>
            Verify
          </button>
        </div>
      </div>
      <VerifyResult verifying={verifying} />
      {(problem || error) && (
        <p role="alert" className="error">
          {problem ?? messageOf(error)}{' '}
          {error && !problem && (
            <button type="button" onClick={() => void refetch()}>
              Try again
            </button>
          )}
        </p>
      )}
      {entries && (
        <p className="view-summary" data-testid="decisions-summary">
          {newestFirst.length === 0
            ? chatId
              ? 'No decisions in this chat.'
              : 'No decisions yet: answered, cancelled and expired requests are logged here.'
            : `${newestFirst.length} ${newestFirst.length === 1 ? 'decision' : 'decisions'}, newest first. Export downloads the whole log.`}
        </p>
      )}
      {newestFirst.length > 0 && (
        <ol className="decision-list" aria-label="Decisions, newest first">
          {newestFirst.slice(0, shown).map((entry) => (
            <Entry key={entry.seq} entry={entry} title={titles.get(entry.chat_id)} />
          ))}
        </ol>
      )}
      {newestFirst.length > shown && (
        <button type="button" className="show-older" onClick={() => setShown(shown + STEP)}>
          Show older
        </button>
      )}
    </ViewPage>
  );
}

function VerifyResult({ verifying }: { verifying: Verifying }) {
  if (verifying.state === 'idle') return null;
  if (verifying.state === 'running') {
    return (
      <p className="verify-result" role="status" data-testid="verify-result" data-state="running">
        Checking{verifying.checked ? `: ${verifying.checked} entries so far` : ''}…
      </p>
    );
  }
  const { check } = verifying;
  return (
    <p
      className="verify-result"
      role={check.intact ? 'status' : 'alert'}
      data-testid="verify-result"
      data-state={check.intact ? 'intact' : 'broken'}
    >
      {checkText(check)}
    </p>
  );
}

function Entry({ entry, title }: { entry: DecisionEntry; title: string | undefined }) {
  const path = pathOf({ name: 'chat', chatId: entry.chat_id });
  const outcome = payloadText(entry.payload);
  return (
    <li className="decision" data-testid="decision" data-seq={entry.seq} data-chat-id={entry.chat_id}>
      <div className="decision-head">
        <span className="decision-seq">#{entry.seq}</span>
        <span className={`decision-action ${entry.action}`}>{ACTIONS[entry.action]}</span>
        <time dateTime={entry.at} title={fullTime(entry.at)}>
          {relativeTime(entry.at)}
        </time>
      </div>
      <p className="decision-title">
        <bdi>{entry.title}</bdi>
      </p>
      <p className="decision-meta">
        {ACTORS[entry.actor]}
        {entry.resolved_by ? ` (${entry.resolved_by})` : ''} · in{' '}
        <a href={path} onClick={(e) => onLinkClick(e, path)}>
          <bdi>{title ?? 'a chat'}</bdi>
        </a>
      </p>
      {outcome && (
        <p className="decision-payload" data-testid="decision-payload">
          {outcome}
        </p>
      )}
    </li>
  );
}

/** A payload in brief: the chosen option ids, the text, or the form's values. */
function payloadText(payload: Record<string, unknown> | null): string {
  if (!payload) return '';
  if (Array.isArray(payload.selectedOptionIds)) return `Chose: ${payload.selectedOptionIds.join(', ') || 'nothing'}`;
  if (typeof payload.text === 'string') return `Wrote: “${payload.text}”`;
  if (payload.values && typeof payload.values === 'object') {
    const values = Object.entries(payload.values as Record<string, unknown>).map(
      ([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`,
    );
    return `Filled in: ${values.join('; ')}`;
  }
  return JSON.stringify(payload);
}

/** The titles of the chats the log names (the chat queries every screen shares). */
function useChatTitles(chatIds: string[]): Map<string, string> {
  const results = useQueries({
    queries: chatIds.map((id) => ({
      queryKey: keys.chat(id),
      queryFn: () => api.getChat(id),
      structuralSharing: false,
    })),
  });
  const titles = new Map<string, string>();
  results.forEach((result, i) => {
    if (result.data) titles.set(chatIds[i]!, result.data.title);
  });
  return titles;
}
