// Asked when the hub answers 401: the admin token for /admin/*, the API token for /jobs. Each
// is kept in localStorage and sent from then on to its own routes.
import { useState, type FormEvent } from 'react';
import { useStore } from 'zustand';
import type { TokenScope } from '../model/hub-tokens.ts';
import { connectionStore } from '../stores/connection.ts';
import { useActions } from './console-context.ts';

const TEXT: Record<TokenScope, { title: string; why: string; placeholder: string }> = {
  admin: {
    title: 'Admin token (PAPRIKA_ADMIN_TOKEN)',
    why: 'This hub is protected by PAPRIKA_ADMIN_TOKEN. Enter it to continue; it is stored in this browser only.',
    placeholder: 'admin token',
  },
  api: {
    title: 'API token (PAPRIKA_API_TOKEN)',
    why: 'Jobs on this hub are protected by PAPRIKA_API_TOKEN, and the admin token was refused there. Enter the API token to list and open jobs; it is stored in this browser only.',
    placeholder: 'API token',
  },
};

export function TokenPrompt({ scope }: { scope: TokenScope }) {
  const actions = useActions();
  const error = useStore(connectionStore, (s) => (scope === 'admin' ? s.link.lastError : s.apiAuthError));
  const [token, setToken] = useState('');
  const text = TEXT[scope];
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (token.trim()) actions.saveToken(token.trim(), scope);
  };
  return (
    <div className="modal-backdrop">
      <form className="modal" onSubmit={submit} data-testid="token-prompt" data-token-scope={scope}>
        <h2>{text.title}</h2>
        <p>{text.why}</p>
        {error && <p className="muted">Hub said: {error}</p>}
        <input type="password" autoFocus value={token} onChange={(e) => setToken(e.target.value)} placeholder={text.placeholder} aria-label={text.title} data-testid="token-input" />
        <div className="modal-actions">
          {scope === 'api' && (
            <button type="button" className="btn" onClick={() => actions.dismissApiToken()} data-testid="token-skip">
              Not now
            </button>
          )}
          <button type="submit" className="btn primary" data-testid="token-save">
            Connect
          </button>
        </div>
      </form>
    </div>
  );
}
