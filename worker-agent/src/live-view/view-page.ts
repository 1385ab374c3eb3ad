// The page an operator opens for one lane: it draws the lane's JPEG frames, or "idle".
// It opens the stream with the token it was opened with (?vt=); once that is refused or the
// stream's time limit is reached, it says so and stops: a new link comes from the console.

/** The page runs only its own script and draws only blob: frames; no one may frame it. */
export function viewPageHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    // The URL carries the token: never send it on as a Referer.
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
  };
}

export function viewPageHtml(laneIndex: number, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Paprika lane ${laneIndex}</title>
<style nonce="${nonce}">
  html, body { margin: 0; height: 100%; background: #111; color: #ccc; font: 14px system-ui, sans-serif; }
  #screen { display: block; max-width: 100%; max-height: 100%; margin: auto; }
  #state { position: fixed; top: 8px; left: 8px; padding: 2px 8px; background: #0008; border-radius: 4px; }
</style>
</head>
<body>
<div id="state">lane ${laneIndex}: connecting…</div>
<img id="screen" alt="lane ${laneIndex} screen">
<script nonce="${nonce}">
  const img = document.getElementById('screen');
  const state = document.getElementById('state');
  const again = ' — open the lane again from the console';
  let shown = null;
  function connect() {
    const url = new URL(location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.pathname = url.pathname.replace(/\\/view$/, '/stream');
    url.hash = '';
    const ws = new WebSocket(url);
    let opened = false;
    ws.binaryType = 'blob';
    ws.onopen = () => { opened = true; };
    ws.onmessage = (event) => {
      if (typeof event.data === 'string') {
        if (JSON.parse(event.data).type === 'idle') { state.textContent = 'lane ${laneIndex}: idle'; img.style.visibility = 'hidden'; }
        return;
      }
      const next = URL.createObjectURL(event.data);
      img.onload = () => { if (shown) URL.revokeObjectURL(shown); shown = next; };
      img.src = next;
      img.style.visibility = 'visible';
      state.textContent = 'lane ${laneIndex}: live';
    };
    ws.onclose = (event) => {
      // Refused (expired or wrong token): retrying with the same token cannot help.
      if (!opened) { state.textContent = 'lane ${laneIndex}: view link expired or refused' + again; return; }
      if (event.code === 4001) { state.textContent = 'lane ${laneIndex}: view time limit reached' + again; return; }
      // The agent restarted or the network blinked: try once more while the token may still be valid.
      state.textContent = 'lane ${laneIndex}: disconnected, retrying…';
      setTimeout(connect, 2000);
    };
  }
  connect();
</script>
</body>
</html>
`;
}
