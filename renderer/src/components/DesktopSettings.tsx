// Desktop app only: embedded hub or remote hub, and the admin token (kept by the main
// process, encrypted with the OS keychain; the renderer never reads it back).
import { useEffect, useState, type FormEvent } from 'react';
import { desktopBridge, type DesktopSettingsView } from '../live/desktop-bridge.ts';

export function DesktopSettings({ onClose }: { onClose(): void }) {
  const bridge = desktopBridge();
  const [view, setView] = useState<DesktopSettingsView | null>(null);
  const [mode, setMode] = useState<'embedded' | 'remote'>('embedded');
  const [remoteUrl, setRemoteUrl] = useState('');
  const [port, setPort] = useState('8080');
  const [token, setToken] = useState('');
  const [errors, setErrors] = useState<string[]>([]);

  useEffect(() => {
    void bridge?.getSettings().then((s) => {
      setView(s);
      setMode(s.mode);
      setRemoteUrl(s.remoteUrl);
      setPort(String(s.embeddedPort));
    });
  }, [bridge]);

  if (!bridge) return null;
  const storedFor = !view?.tokenHub ? null : view.tokenHub === remoteUrl.trim().replace(/\/+$/, '') ? 'this' : 'other';
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await bridge.saveSettings({ mode, remoteUrl, embeddedPort: Number(port), adminToken: token === '' ? undefined : token });
    if (res.ok) onClose();
    else setErrors(res.errors);
  };

  return (
    <div className="modal-backdrop">
      <form className="modal" onSubmit={(e) => void submit(e)}>
        <h2>Hub connection</h2>
        <label className="radio">
          <input type="radio" checked={mode === 'embedded'} onChange={() => setMode('embedded')} /> Run a hub inside this app (local demo)
        </label>
        {mode === 'embedded' && (
          <label className="field">
            Port <input value={port} onChange={(e) => setPort(e.target.value)} inputMode="numeric" />
          </label>
        )}
        <label className="radio">
          <input type="radio" checked={mode === 'remote'} onChange={() => setMode('remote')} /> Connect to a remote hub
        </label>
        {mode === 'remote' && (
          <>
            <label className="field">
              Hub URL <input value={remoteUrl} onChange={(e) => setRemoteUrl(e.target.value)} placeholder="https://hub.example:8080" />
            </label>
            <label className="field">
              Admin token (PAPRIKA_ADMIN_TOKEN){' '}
              <input type="password" value={token} onChange={(e) => setToken(e.target.value)} placeholder={storedFor === 'this' ? '(stored — leave empty to keep)' : 'PAPRIKA_ADMIN_TOKEN'} />
            </label>
            {storedFor === 'other' && <p className="muted">The stored token is for {view?.tokenHub} and is sent there only: enter this hub's token, or leave it empty and the console asks.</p>}
            <p className="muted">If jobs on this hub need a different API token (PAPRIKA_API_TOKEN), the console asks for it.</p>
            {view && !view.encryptionAvailable && <p className="muted">OS encryption is unavailable: the token cannot be stored and must be entered in the console.</p>}
          </>
        )}
        {errors.map((e) => (
          <div key={e} className="inline-error">
            {e}
          </div>
        ))}
        <div className="modal-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn primary">
            Save and reconnect
          </button>
        </div>
      </form>
    </div>
  );
}
