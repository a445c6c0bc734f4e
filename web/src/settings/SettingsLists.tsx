/** The settings screen's lists: agents, models (with metadata) and webhooks, each row added, edited or removed. */
import { HOOK_EVENTS, fieldId, newAgent, newHook, newMetadata, newModel } from './settings';
import type { Draft, HookDraft } from './settings';
import { CheckField, FieldMessage, TextField, replaceAt, useField } from './SettingsField';
import type { Edit } from './SettingsField';

/** Focuses a field once the row that holds it has rendered. */
const focusSoon = (path: string) => setTimeout(() => document.getElementById(fieldId(path))?.focus());

export function AgentsSection({ draft, edit }: { draft: Draft; edit: Edit }) {
  const models = draft.models.filter((m) => m.id.trim());
  return (
    <section className="settings-section" aria-labelledby="settings-agents">
      <h2 id="settings-agents" tabIndex={-1}>
        Agents
      </h2>
      <FieldMessage path="agents" />
      {draft.agents.map((agent, i) => {
        const set = (patch: Partial<typeof agent>) => edit((d) => ({ ...d, agents: replaceAt(d.agents, i, patch) }));
        return (
          <fieldset key={agent.key} className="settings-row" data-testid="agent-row">
            <legend>{`Agent ${i + 1}`}</legend>
            <div className="settings-grid">
              <TextField path={`agents.${i}.id`} label="ID" value={agent.id} onChange={(id) => set({ id })} />
              <TextField path={`agents.${i}.name`} label="Name" value={agent.name} onChange={(name) => set({ name })} />
              <TextField
                path={`agents.${i}.description`}
                label="Description"
                multiline
                value={agent.description}
                onChange={(description) => set({ description })}
              />
              <ModelSelect
                path={`agents.${i}.defaultModelId`}
                label="Default model"
                value={agent.defaultModelId}
                models={models}
                none="None"
                onChange={(defaultModelId) => set({ defaultModelId })}
              />
              <TextField
                path={`agents.${i}.avatarUrl`}
                label="Avatar URL"
                type="url"
                value={agent.avatarUrl}
                onChange={(avatarUrl) => set({ avatarUrl })}
              />
            </div>
            <button
              type="button"
              className="danger"
              onClick={() => {
                edit((d) => ({ ...d, agents: d.agents.filter((_, j) => j !== i) }));
                document.getElementById('settings-agents')?.focus();
              }}
            >
              {`Remove agent ${i + 1}`}
            </button>
          </fieldset>
        );
      })}
      <button
        type="button"
        onClick={() => {
          edit((d) => ({ ...d, agents: [...d.agents, newAgent()] }));
          focusSoon(`agents.${draft.agents.length}.id`);
        }}
      >
        Add agent
      </button>
    </section>
  );
}

export function ModelSelect({
  path,
  label,
  value,
  models,
  none,
  onChange,
}: {
  path: string;
  label: string;
  value: string;
  models: { key: string; id: string; name: string }[];
  none: string;
  onChange: (id: string) => void;
}) {
  const field = useField(path);
  const known = models.some((m) => m.id.trim() === value);
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      <select {...field} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{none}</option>
        {/* A model removed from the list below still shows while an agent names it (saving then says why not). */}
        {value && !known && <option value={value}>{`${value} (not in the list)`}</option>}
        {models.map((m) => (
          <option key={m.key} value={m.id.trim()}>
            {m.name || m.id}
          </option>
        ))}
      </select>
      <FieldMessage path={path} />
    </div>
  );
}

export function ModelsSection({ draft, edit }: { draft: Draft; edit: Edit }) {
  return (
    <section className="settings-section" aria-labelledby="settings-models">
      <h2 id="settings-models" tabIndex={-1}>
        Models
      </h2>
      <FieldMessage path="models" />
      {draft.models.map((model, i) => {
        const set = (patch: Partial<typeof model>) => edit((d) => ({ ...d, models: replaceAt(d.models, i, patch) }));
        return (
          <fieldset key={model.key} className="settings-row" data-testid="model-row">
            <legend>{`Model ${i + 1}`}</legend>
            <div className="settings-grid">
              <TextField path={`models.${i}.id`} label="ID" value={model.id} onChange={(id) => set({ id })} />
              <TextField path={`models.${i}.name`} label="Name" value={model.name} onChange={(name) => set({ name })} />
              <TextField
                path={`models.${i}.description`}
                label="Description"
                multiline
                value={model.description}
                onChange={(description) => set({ description })}
              />
            </div>
            <fieldset className="metadata">
              <legend>Metadata</legend>
              {model.metadata.map((entry, k) => {
                const setEntry = (patch: Partial<typeof entry>) =>
                  set({ metadata: replaceAt(model.metadata, k, patch) });
                return (
                  <div key={entry.key} className="metadata-entry">
                    <TextField
                      path={`models.${i}.metadata.${k}.name`}
                      label="Key"
                      value={entry.name}
                      onChange={(name) => setEntry({ name })}
                    />
                    <TextField
                      path={`models.${i}.metadata.${k}.value`}
                      label="Value"
                      value={entry.value}
                      onChange={(value) => setEntry({ value })}
                    />
                    <button
                      type="button"
                      className="quiet"
                      onClick={() => set({ metadata: model.metadata.filter((_, j) => j !== k) })}
                    >
                      {`Remove metadata ${entry.name || k + 1}`}
                    </button>
                  </div>
                );
              })}
              <FieldMessage path={`models.${i}.metadata`} />
              <button
                type="button"
                className="quiet add-metadata"
                onClick={() => {
                  set({ metadata: [...model.metadata, newMetadata()] });
                  focusSoon(`models.${i}.metadata.${model.metadata.length}.name`);
                }}
              >
                Add metadata
              </button>
            </fieldset>
            <button
              type="button"
              className="danger"
              onClick={() => {
                edit((d) => ({ ...d, models: d.models.filter((_, j) => j !== i) }));
                document.getElementById('settings-models')?.focus();
              }}
            >
              {`Remove model ${i + 1}`}
            </button>
          </fieldset>
        );
      })}
      <button
        type="button"
        onClick={() => {
          edit((d) => ({ ...d, models: [...d.models, newModel()] }));
          focusSoon(`models.${draft.models.length}.id`);
        }}
      >
        Add model
      </button>
    </section>
  );
}

export function HooksSection({ draft, edit }: { draft: Draft; edit: Edit }) {
  return (
    <section className="settings-section" aria-labelledby="settings-hooks">
      <h2 id="settings-hooks" tabIndex={-1}>
        Webhooks
      </h2>
      <p className="hint">
        Each event of the chosen types is POSTed to the URL. Signing secrets and headers are write-only: they are
        stored, never shown.
      </p>
      {draft.hooks.length === 0 && <p className="hint">No webhooks.</p>}
      {draft.hooks.map((hook, i) => (
        <HookRow key={hook.key} hook={hook} index={i} edit={edit} />
      ))}
      <button
        type="button"
        onClick={() => {
          edit((d) => ({ ...d, hooks: [...d.hooks, newHook()] }));
          focusSoon(`hooks.${draft.hooks.length}.url`);
        }}
      >
        Add webhook
      </button>
    </section>
  );
}

function HookRow({ hook, index: i, edit }: { hook: HookDraft; index: number; edit: Edit }) {
  const set = (patch: Partial<HookDraft>) => edit((d) => ({ ...d, hooks: replaceAt(d.hooks, i, patch) }));
  const events = useField(`hooks.${i}.events`);
  const headers = useField(`hooks.${i}.headers`);
  const movedAway = hook.storedUrl !== undefined && hook.url.trim() !== hook.storedUrl;
  const stored = (has: boolean, removing: boolean) => (removing ? 'removed on save' : has ? 'stored' : 'not set');
  return (
    <fieldset className="settings-row" data-testid="hook-row">
      <legend>{`Webhook ${i + 1}`}</legend>
      <TextField path={`hooks.${i}.url`} label="URL" type="url" value={hook.url} onChange={(url) => set({ url })} />
      <fieldset className="hook-events" id={events.id} tabIndex={-1} aria-describedby={events['aria-describedby']}>
        <legend>Events</legend>
        <div className="event-choices">
          {HOOK_EVENTS.map((type) => (
            <label key={type} className="check">
              <input
                type="checkbox"
                checked={hook.events.includes(type)}
                onChange={(e) =>
                  set({
                    events: e.target.checked
                      ? HOOK_EVENTS.filter((t) => t === type || hook.events.includes(t))
                      : hook.events.filter((t) => t !== type),
                  })
                }
              />
              {type}
            </label>
          ))}
        </div>
        <FieldMessage path={`hooks.${i}.events`} />
      </fieldset>
      <div className="settings-grid">
        <TextField
          path={`hooks.${i}.timeoutMs`}
          label="Timeout (ms)"
          type="number"
          value={hook.timeoutMs}
          onChange={(timeoutMs) => set({ timeoutMs })}
        />
        <TextField
          path={`hooks.${i}.maxRetries`}
          label="Max retries"
          type="number"
          value={hook.maxRetries}
          onChange={(maxRetries) => set({ maxRetries })}
        />
      </div>
      {movedAway && (hook.hasSigningSecret || hook.hasHeaders) && (
        <p className="hint" role="note">
          A new URL keeps no stored signing secret or headers: enter them again if the new URL needs them.
        </p>
      )}
      <div className="settings-grid">
        <div className="field">
          <TextField
            path={`hooks.${i}.signingSecret`}
            label="Signing secret"
            type="password"
            autoComplete="new-password"
            placeholder={hook.hasSigningSecret ? 'Type a new one to replace it' : ''}
            value={hook.newSigningSecret}
            onChange={(newSigningSecret) => set({ newSigningSecret, removeSigningSecret: false })}
          />
          <p className="hint" data-testid="signing-secret-state">
            {`Signing secret: ${stored(hook.hasSigningSecret && !movedAway, hook.removeSigningSecret)}`}
          </p>
          {hook.hasSigningSecret && !movedAway && (
            <CheckField
              path={`hooks.${i}.removeSigningSecret`}
              label="Remove the stored signing secret"
              checked={hook.removeSigningSecret}
              onChange={(removeSigningSecret) => set({ removeSigningSecret, newSigningSecret: '' })}
            />
          )}
        </div>
        <div className="field">
          <label htmlFor={headers.id}>Headers</label>
          <textarea
            {...headers}
            rows={2}
            spellCheck={false}
            placeholder={hook.hasHeaders ? 'Type new ones to replace them' : 'Name: value (one a line)'}
            value={hook.newHeaders}
            onChange={(e) => set({ newHeaders: e.target.value, removeHeaders: false })}
          />
          <FieldMessage path={`hooks.${i}.headers`} />
          <p className="hint" data-testid="headers-state">
            {`Headers: ${stored(hook.hasHeaders && !movedAway, hook.removeHeaders)}`}
          </p>
          {hook.hasHeaders && !movedAway && (
            <CheckField
              path={`hooks.${i}.removeHeaders`}
              label="Remove the stored headers"
              checked={hook.removeHeaders}
              onChange={(removeHeaders) => set({ removeHeaders, newHeaders: '' })}
            />
          )}
        </div>
      </div>
      <button
        type="button"
        className="danger"
        onClick={() => {
          edit((d) => ({ ...d, hooks: d.hooks.filter((_, j) => j !== i) }));
          document.getElementById('settings-hooks')?.focus();
        }}
      >
        {`Remove webhook ${i + 1}`}
      </button>
    </fieldset>
  );
}
