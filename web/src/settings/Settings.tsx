/**
 * The settings screen (`/settings`): everything PATCH /config/admin takes (agents, models, the
 * default model, security, push, auto-rename, webhooks; docs/divergences.md "Settings without rawConfig"),
 * loaded from GET /config. Save sends only the sections that changed, with an Idempotency-Key; a
 * 400 shows its message at the field it names and focuses it, and the form keeps every edit (the
 * service saved nothing). Stored secrets are never shown: the form says "stored" or "not set" and
 * sends a secret only when one was typed.
 */
import { useEffect, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { api, ApiError, newIdempotencyKey } from '../api/client';
import type { AutoRenameProvider, PublicConfig } from '../api/types';
import { onLinkClick } from '../router';
import { messageOf } from '../api/client';
import { putConfig } from '../shared/config';
import { changeOf, draftOf, fieldId, fieldOfError, nearestField, reflects } from './settings';
import type { Draft } from './settings';
import { checkDraft, humanMessage } from './settings-checks';
import { CheckField, FieldMessage, ProblemContext, TextField, useField } from './SettingsField';
import type { Edit, FieldProblem } from './SettingsField';
import { AgentsSection, HooksSection, ModelSelect, ModelsSection } from './SettingsLists';
import { SecuritySection } from './SettingsSecurity';

type Loaded = { config: PublicConfig; draft: Draft };

/**
 * GET /config once it shows a saved change. Another instance of the service may answer from its
 * configuration cache for up to CONFIG_CACHE_MS (5 s, docs/architecture.md "Configuration at run time") after the
 * change: a read that neither shows the saved values nor differs from the one before the save is
 * tried again, for up to 6 s, rather than putting the old values back into the form. (A value the
 * service normalizes, such as a push subject it derives, shows as a difference.)
 */
async function settledConfig(saved: Draft, before: PublicConfig): Promise<PublicConfig> {
  const until = Date.now() + 6000;
  for (;;) {
    const config = await api.config();
    const settled = reflects(config, saved) || JSON.stringify(config) !== JSON.stringify(before);
    if (settled || Date.now() >= until) return config;
    await new Promise((r) => setTimeout(r, 400));
  }
}

/** Each section's heading id and name, for the jump links at the top. */
const SECTIONS = [
  ['settings-agents', 'Agents'],
  ['settings-models', 'Models'],
  ['settings-default-model', 'Default model'],
  ['settings-security', 'Security'],
  ['settings-push', 'Push'],
  ['settings-auto-rename', 'Auto-rename'],
  ['settings-hooks', 'Webhooks'],
] as const;

export function Settings({ onSignedOut }: { onSignedOut: () => void }) {
  const [loaded, setLoaded] = useState<Loaded | undefined>();
  const [draft, setDraft] = useState<Draft | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [problems, setProblems] = useState<readonly FieldProblem[]>([]);
  /** After a save the form refused itself: the form's own checks follow each edit (a fixed field's message goes). */
  const [checking, setChecking] = useState(false);
  const [status, setStatus] = useState<{ kind: 'saved' | 'error'; text: string } | undefined>();
  const [busy, setBusy] = useState(false);
  /** One key per distinct change: saving the same change again (a lost answer) reuses it. */
  const attempt = useRef<{ body: string; key: string } | undefined>(undefined);

  /** Only the latest read fills the form: an earlier one answering late would wipe the user's edits. */
  const loads = useRef(0);

  async function load() {
    const seq = ++loads.current;
    setLoadError(undefined);
    try {
      const config = await api.config();
      if (seq !== loads.current) return;
      const fresh = draftOf(config);
      setLoaded({ config, draft: fresh });
      setDraft(fresh);
    } catch (caught) {
      if (seq === loads.current) setLoadError(messageOf(caught));
    }
  }

  useEffect(() => {
    void load();
  }, []);

  const edit: Edit = (change) => {
    setDraft((d) => (d ? change(d) : d));
    setStatus((s) => (s?.kind === 'saved' ? undefined : s));
  };

  useEffect(() => {
    if (checking && draft) setProblems(checkDraft(draft));
  }, [checking, draft]);

  /** Shows the problems at their fields (the first one focused) and the outcome in the save bar. */
  function show(found: readonly FieldProblem[], text: string) {
    setProblems(found);
    setStatus({ kind: 'error', text });
    const first = found[0];
    if (first) setTimeout(() => document.getElementById(fieldId(first.path))?.focus());
  }

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!loaded || !draft || busy) return;
    // Checked here first: the service is not asked about what the form can say itself.
    const local = checkDraft(draft);
    if (local.length > 0) {
      setChecking(true);
      show(
        local,
        local.length === 1
          ? 'Nothing was saved: fix the field marked above.'
          : `Nothing was saved: fix the ${local.length} fields marked above.`,
      );
      return;
    }
    setChecking(false);
    const body = changeOf(loaded.draft, draft);
    if (Object.keys(body).length === 0) {
      setProblems([]);
      setStatus({ kind: 'saved', text: 'Nothing to save.' });
      return;
    }
    const text = JSON.stringify(body);
    if (attempt.current?.body !== text) attempt.current = { body: text, key: newIdempotencyKey() };
    setBusy(true);
    setProblems([]);
    setStatus(undefined);
    try {
      await api.updateConfig(body, attempt.current.key);
      attempt.current = undefined;
      const config = await settledConfig(draft, loaded.config);
      loads.current++;
      setLoaded({ config, draft: draftOf(config) });
      setDraft(draftOf(config));
      // Every screen sees the new agents, models and security.
      putConfig(config);
      setStatus({ kind: 'saved', text: 'Saved.' });
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 400) {
        // The service's rule at the field it names, in the person's words (settings/settings-checks.ts).
        const named = fieldOfError(caught.message, caught.details, draft);
        const path = named && nearestField(named, (id) => document.getElementById(id) !== null);
        const message = humanMessage(caught.message, named);
        show(path ? [{ path, message }] : [], `Nothing was saved. ${message}`);
      } else {
        show([], `Nothing was saved. ${messageOf(caught)}`);
      }
    } finally {
      setBusy(false);
    }
  }

  const dirty = loaded && draft ? Object.keys(changeOf(loaded.draft, draft)).length > 0 : false;

  function rotated() {
    history.replaceState(null, '', '/sign-in');
    onSignedOut();
  }

  return (
    <section className="settings-page" aria-labelledby="settings-heading">
      <header className="chat-header">
        <a className="back" href="/" onClick={(e) => onLinkClick(e, '/')}>
          <span aria-hidden="true">‹</span>
          <span className="visually-hidden">Back to chats</span>
        </a>
        <h1 id="settings-heading">Settings</h1>
      </header>
      {loadError && (
        <div className="settings-body">
          <p role="alert" className="error">
            {loadError}
          </p>
          <button type="button" onClick={() => void load()}>
            Try again
          </button>
        </div>
      )}
      {!loadError && (!draft || !loaded) && <div className="settings-body" aria-busy="true" />}
      {draft && loaded && (
        <ProblemContext.Provider value={problems}>
          <form className="settings-form" onSubmit={(e) => void save(e)} noValidate>
            {/* The sections scroll; the save bar stays below them, never over a field. */}
            <div className="settings-body">
              <nav className="settings-nav" aria-label="Settings sections">
                {SECTIONS.map(([id, name]) => (
                  <a key={id} href={`#${id}`}>
                    {name}
                  </a>
                ))}
              </nav>
              <AgentsSection draft={draft} edit={edit} />
              <ModelsSection draft={draft} edit={edit} />
              <DefaultModelSection draft={draft} edit={edit} />
              <SecuritySection
                draft={draft}
                edit={edit}
                onRotated={rotated}
                setByDeployment={Boolean(loaded.config.security.secretSetByDeployment)}
              />
              <PushSection draft={draft} edit={edit} config={loaded.config} />
              <AutoRenameSection draft={draft} edit={edit} config={loaded.config} />
              <HooksSection draft={draft} edit={edit} />
            </div>
            <div className="save-bar">
              <button type="submit" className="primary" disabled={busy}>
                {busy ? 'Saving…' : 'Save changes'}
              </button>
              <button
                type="button"
                disabled={busy}
                onClick={() => {
                  setDraft(loaded.draft);
                  setChecking(false);
                  setProblems([]);
                  setStatus(undefined);
                }}
              >
                Discard changes
              </button>
              {!status && dirty && <p className="hint">Unsaved changes.</p>}
              {status && (
                <p
                  role={status.kind === 'error' ? 'alert' : 'status'}
                  className={status.kind === 'error' ? 'error' : 'hint'}
                  data-testid="settings-status"
                >
                  {status.text}
                </p>
              )}
            </div>
          </form>
        </ProblemContext.Provider>
      )}
    </section>
  );
}

function DefaultModelSection({ draft, edit }: { draft: Draft; edit: (change: (d: Draft) => Draft) => void }) {
  return (
    <section className="settings-section" aria-labelledby="settings-default-model">
      <h2 id="settings-default-model">Default model</h2>
      <ModelSelect
        path="defaultModelIdForNewChats"
        label="Default model for new chats"
        value={draft.defaultModelId}
        models={draft.models.filter((m) => m.id.trim())}
        none="None (the first model)"
        onChange={(defaultModelId) => edit((d) => ({ ...d, defaultModelId }))}
      />
    </section>
  );
}

function PushSection({ draft, edit, config }: { draft: Draft; edit: Edit; config: PublicConfig }) {
  const set = (patch: Partial<Draft['push']>) => edit((d) => ({ ...d, push: { ...d.push, ...patch } }));
  return (
    <section className="settings-section" aria-labelledby="settings-push">
      <h2 id="settings-push">Push notifications</h2>
      <CheckField
        path="push.enabled"
        label="Send web push notifications"
        checked={draft.push.enabled}
        onChange={(enabled) => set({ enabled })}
      />
      <TextField
        path="push.subject"
        label="Subject"
        placeholder="mailto:you@example.com or https://…"
        value={draft.push.subject}
        onChange={(subject) => set({ subject })}
      />
      <p className="hint">
        {`Empty: derived from the public URL. The key pair is the service's own: ${
          config.push.vapidPublicKey ? 'made' : 'made when push is turned on'
        }; its private half is never shown.`}
      </p>
    </section>
  );
}

function AutoRenameSection({ draft, edit, config }: { draft: Draft; edit: Edit; config: PublicConfig }) {
  const rename = draft.autoRename;
  const set = (patch: Partial<Draft['autoRename']>) =>
    edit((d) => ({ ...d, autoRename: { ...d.autoRename, ...patch } }));
  const provider = config.autoRenameProviders.find((p) => p.id === rename.provider);
  const providerField = useField('autoRename.provider');
  const hasKey = config.autoRename?.hasApiKey ?? false;
  const [test, setTest] = useState<{ ok: boolean; text: string } | { busy: true } | undefined>();

  async function runTest() {
    setTest({ busy: true });
    try {
      await api.testAutoRename({
        // The draft's text as it stands: one the service does not know gets its 400, naming the field.
        provider: rename.provider as AutoRenameProvider['id'],
        modelId: rename.modelId.trim(),
        ...(rename.apiKey ? { apiKey: rename.apiKey } : {}),
      });
      setTest({ ok: true, text: `${provider?.name ?? rename.provider} answered: the settings work.` });
    } catch (caught) {
      setTest({ ok: false, text: messageOf(caught) });
    }
  }

  return (
    <section className="settings-section" aria-labelledby="settings-auto-rename">
      <h2 id="settings-auto-rename">Auto-rename</h2>
      <CheckField
        path="autoRename.enabled"
        label="Title new chats automatically"
        checked={rename.enabled}
        onChange={(enabled) => set({ enabled })}
      />
      <div className="settings-grid">
        <div className="field">
          <label htmlFor={providerField.id}>Provider</label>
          <select
            {...providerField}
            value={rename.provider}
            onChange={(e) => set({ provider: e.target.value, modelId: '' })}
          >
            {config.autoRenameProviders.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
          <FieldMessage path="autoRename.provider" />
        </div>
        <TextField
          path="autoRename.modelId"
          label="Model"
          list="auto-rename-models"
          placeholder={provider?.cheapModels[0]?.id}
          value={rename.modelId}
          onChange={(modelId) => set({ modelId })}
        />
        <datalist id="auto-rename-models">
          {provider?.cheapModels.map((m) => (
            <option key={m.id} value={m.id}>
              {m.label}
            </option>
          ))}
        </datalist>
        <div className="field">
          <TextField
            path="autoRename.apiKey"
            label="API key"
            type="password"
            autoComplete="new-password"
            placeholder={hasKey ? 'Type a new one to replace it' : ''}
            value={rename.apiKey}
            onChange={(apiKey) => set({ apiKey, removeApiKey: false })}
          />
          <p className="hint" data-testid="api-key-state">
            {`API key: ${rename.removeApiKey ? 'removed on save' : hasKey ? 'stored' : 'not set'}${
              provider
                ? `; ${provider.envVar} ${provider.hasEnvKey ? 'is set on the server' : 'is not set on the server'}`
                : ''
            }.`}
          </p>
          {hasKey && (
            <CheckField
              path="autoRename.removeApiKey"
              label="Remove the stored API key"
              checked={rename.removeApiKey}
              onChange={(removeApiKey) => set({ removeApiKey, apiKey: '' })}
            />
          )}
        </div>
      </div>
      <div className="test-row">
        <button type="button" disabled={test !== undefined && 'busy' in test} onClick={() => void runTest()}>
          Test
        </button>
        {test && !('busy' in test) && (
          <p role={test.ok ? 'status' : 'alert'} className={test.ok ? 'ok' : 'error'} data-testid="auto-rename-test">
            {test.text}
          </p>
        )}
      </div>
      <p className="hint">
        The test makes one short call to the provider with the key typed above, else the stored one.
      </p>
    </section>
  );
}
