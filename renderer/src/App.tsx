// The console's frame: header with the fleet at a glance, the link banner, and four views.
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import { CapacityBanner } from './components/CapacityBanner.tsx';
import { ConnectionBanner } from './components/ConnectionBanner.tsx';
import { DesktopSettings } from './components/DesktopSettings.tsx';
import { HeaderSummary } from './components/HeaderSummary.tsx';
import { TokenPrompt } from './components/TokenPrompt.tsx';
import { desktopBridge } from './live/desktop-bridge.ts';
import { tokenToAsk } from './model/hub-tokens.ts';
import { connectionStore } from './stores/connection.ts';
import { ChartsView } from './views/ChartsView.tsx';
import { HubsView } from './views/HubsView.tsx';
import { JobsView } from './views/JobsView.tsx';
import { WorkersView } from './views/WorkersView.tsx';

const VIEWS = ['workers', 'hubs', 'jobs', 'charts'] as const;
type View = (typeof VIEWS)[number];

function viewFromHash(): View {
  const h = location.hash.replace(/^#\/?/, '');
  return (VIEWS as readonly string[]).includes(h) ? (h as View) : 'workers';
}

export function App() {
  const [view, setView] = useState<View>(viewFromHash);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const authRequired = useStore(connectionStore, (s) => s.link.authRequired);
  const apiAuth = useStore(connectionStore, (s) => s.apiAuth);
  const ask = tokenToAsk(authRequired, apiAuth);
  const config = useStore(connectionStore, (s) => s.config);
  const hubUrl = useStore(connectionStore, (s) => s.hubUrl);

  useEffect(() => {
    const on = () => setView(viewFromHash());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          Paprika <span className="brand-sub">console</span>
        </div>
        <nav className="tabs">
          {VIEWS.map((v) => (
            <a key={v} href={`#/${v}`} className={v === view ? 'tab active' : 'tab'} data-testid={`tab-${v}`}>
              {v}
            </a>
          ))}
        </nav>
        <HeaderSummary />
        <div className="hub-ident" title={hubUrl}>
          {config ? `${config.hub_id} · v${config.version}` : hubUrl}
          {desktopBridge() && (
            <button className="btn small" onClick={() => setSettingsOpen(true)}>
              Settings
            </button>
          )}
        </div>
      </header>
      <ConnectionBanner />
      <CapacityBanner />
      <main className="content">
        {view === 'workers' && <WorkersView />}
        {view === 'hubs' && <HubsView />}
        {view === 'jobs' && <JobsView />}
        {view === 'charts' && <ChartsView />}
      </main>
      {/* keyed: a new question starts with an empty field */}
      {ask && <TokenPrompt key={ask} scope={ask} />}
      {settingsOpen && <DesktopSettings onClose={() => setSettingsOpen(false)} />}
    </div>
  );
}
