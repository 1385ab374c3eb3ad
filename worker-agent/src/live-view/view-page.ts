// The page an operator opens for one lane: it draws the lane's JPEG frames, or "idle".
export function viewPageHtml(laneIndex: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Paprika lane ${laneIndex}</title>
<style>
  html, body { margin: 0; height: 100%; background: #111; color: #ccc; font: 14px system-ui, sans-serif; }
  #screen { display: block; max-width: 100%; max-height: 100%; margin: auto; }
  #state { position: fixed; top: 8px; left: 8px; padding: 2px 8px; background: #0008; border-radius: 4px; }
</style>
</head>
<body>
<div id="state">lane ${laneIndex}: connecting…</div>
<img id="screen" alt="lane ${laneIndex} screen">
<script>
  const img = document.getElementById('screen');
  const state = document.getElementById('state');
  let shown = null;
  function connect() {
    const ws = new WebSocket(location.href.replace(/^http/, 'ws').replace(/\\/view([?#].*)?$/, '/stream'));
    ws.binaryType = 'blob';
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
    // The agent restarts with the worker: keep trying, slowly.
    ws.onclose = () => { state.textContent = 'lane ${laneIndex}: disconnected, retrying…'; setTimeout(connect, 2000); };
  }
  connect();
</script>
</body>
</html>
`;
}
