// Asked when the hub answers 401: the token is kept in localStorage and sent from then on.
import { useState, type FormEvent } from 'react';
import { useStore } from 'zustand';
import { connectionStore } from '../stores/connection.ts';
import { useActions } from './console-context.ts';

export function TokenPrompt() {
  const actions = useActions();
  const error = useStore(connectionStore, (s) => s.link.lastError);
  const [token, setToken] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (token.trim()) actions.saveToken(token.trim());
  };
  return (
    <div className="modal-backdrop">
      <form className="modal" onSubmit={submit} data-testid="token-prompt">
        <h2>Admin token required</h2>
        <p>This hub is protected by PAPRIKA_ADMIN_TOKEN. Enter it to continue; it is stored in this browser only.</p>
        {error && <p className="muted">Hub said: {error}</p>}
        <input type="password" autoFocus value={token} onChange={(e) => setToken(e.target.value)} placeholder="admin token" data-testid="token-input" />
        <div className="modal-actions">
          <button type="submit" className="btn primary" data-testid="token-save">
            Connect
          </button>
        </div>
      </form>
    </div>
  );
}
