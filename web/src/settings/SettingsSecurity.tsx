/**
 * Security settings: whether the instance secret is required (for writes, and for reads too), and
 * rotating it. The secret is write-only: the page never receives the one in force, and a new one
 * (typed, or generated here and shown this once to copy) is sent once, in PATCH /config/admin's
 * body. Rotating ends every browser session, this one included: the page then shows the sign-in.
 */
import { useState } from 'react';
import { api, newIdempotencyKey } from '../api/client';
import { generateSecret } from './settings';
import type { Draft } from './settings';
import { CheckField, FieldMessage, useField } from './SettingsField';
import type { Edit, FieldProblem } from './SettingsField';
import { messageOf } from '../api/client';

const SECRET_PATH = 'security.instanceSecret';

export function SecuritySection({
  draft,
  edit,
  onRotated,
  setByDeployment,
}: {
  draft: Draft;
  edit: Edit;
  onRotated: () => void;
  /** The deployment sets the secret (GET /config `security.secretSetByDeployment`): it cannot be changed here. */
  setByDeployment: boolean;
}) {
  const setSecurity = (patch: Partial<Draft['security']>) =>
    edit((d) => ({ ...d, security: { ...d.security, ...patch } }));
  return (
    <section className="settings-section" aria-labelledby="settings-security">
      <h2 id="settings-security">Security</h2>
      <CheckField
        path="security.instanceSecretEnabled"
        label="Require the instance secret"
        checked={draft.security.instanceSecretEnabled}
        disabled={setByDeployment}
        onChange={(instanceSecretEnabled) => setSecurity({ instanceSecretEnabled })}
      />
      <CheckField
        path="security.readEndpointsRequireInstanceSecret"
        label="Reads require the secret too"
        checked={draft.security.readEndpointsRequireInstanceSecret}
        onChange={(readEndpointsRequireInstanceSecret) => setSecurity({ readEndpointsRequireInstanceSecret })}
      />
      <p className="hint">
        Without the secret, anyone who can reach this instance can use it. The secret in force is stored on the server
        and never shown.
      </p>
      {setByDeployment ? (
        <p className="warning" data-testid="secret-set-by-deployment">
          This deployment sets the instance secret (OPENGRAM_INSTANCE_SECRET, or the stack&apos;s stored secret), so it
          cannot be turned off or rotated here: change it where the deployment sets it.
        </p>
      ) : (
        <RotateSecret onRotated={onRotated} />
      )}
    </section>
  );
}

function RotateSecret({ onRotated }: { onRotated: () => void }) {
  const [secret, setSecret] = useState('');
  const [shown, setShown] = useState(false);
  const [copied, setCopied] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<FieldProblem | undefined>();
  const field = useField(SECRET_PATH);
  const [key, setKey] = useState(newIdempotencyKey);

  async function rotate() {
    if (!secret || busy) return;
    setBusy(true);
    setProblem(undefined);
    try {
      await api.updateConfig({ security: { instanceSecret: secret, instanceSecretEnabled: true } }, key);
      setSecret('');
      onRotated();
    } catch (caught) {
      setProblem({ path: SECRET_PATH, message: messageOf(caught) });
      setBusy(false);
    }
  }

  const invalid = problem ? { 'aria-invalid': true as const, 'aria-describedby': 'rotate-secret-error' } : {};
  return (
    <fieldset className="rotate-secret">
      <legend>Rotate secret</legend>
      <p className="warning" id="rotate-secret-warning">
        Rotating the secret signs out every browser, this one included, and every agent or worker using the old secret
        stops working until it is given the new one. Unsaved changes on this page are lost.
      </p>
      <div className="field">
        <label htmlFor={field.id}>New instance secret</label>
        <div className="secret-input">
          <input
            id={field.id}
            type={shown ? 'text' : 'password'}
            autoComplete="new-password"
            spellCheck={false}
            value={secret}
            aria-describedby={invalid['aria-describedby'] ?? field['aria-describedby'] ?? 'rotate-secret-warning'}
            aria-invalid={invalid['aria-invalid'] ?? field['aria-invalid']}
            onChange={(e) => {
              setSecret(e.target.value);
              setShown(false);
              setCopied(false);
              setKey(newIdempotencyKey());
            }}
          />
          <button
            type="button"
            onClick={() => {
              setSecret(generateSecret());
              setShown(true);
              setCopied(false);
              setKey(newIdempotencyKey());
            }}
          >
            Generate
          </button>
          {shown && (
            <button
              type="button"
              onClick={() =>
                void navigator.clipboard?.writeText(secret).then(
                  () => setCopied(true),
                  () => setCopied(false),
                )
              }
            >
              Copy
            </button>
          )}
        </div>
        <FieldMessage path={SECRET_PATH} />
        {problem && (
          <p id="rotate-secret-error" role="alert" className="error">
            {problem.message}
          </p>
        )}
        {shown && (
          <p className="hint" role="status">
            {copied ? 'Copied.' : 'Shown this once: copy it now, it cannot be shown again.'}
          </p>
        )}
      </div>
      <button type="button" className="danger" disabled={!secret || busy} onClick={() => void rotate()}>
        {busy ? 'Rotating…' : 'Rotate secret'}
      </button>
    </fieldset>
  );
}
