// Content types of the console's built files: the hub serves them at /, the Electron app from
// its app:// scheme. One table for both.
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * Job assets come from the pages jobs visit: only PNG and JPEG are shown inline. Anything else
 * (HTML, SVG…) is a download, sandboxed and never sniffed, so it cannot run as the hub's page.
 */
export function assetHeaders(contentType: string, name: string): Record<string, string> {
  const base = contentType.split(';')[0]!.trim().toLowerCase();
  const inline = base === 'image/png' || base === 'image/jpeg';
  return {
    'content-type': inline ? base : 'application/octet-stream',
    'x-content-type-options': 'nosniff',
    'content-security-policy': 'sandbox',
    ...(inline ? {} : { 'content-disposition': `attachment; filename="${name.replace(/[^A-Za-z0-9_.-]/g, '_')}"` }),
  };
}

export function contentTypeFor(file: string): string {
  const dot = file.lastIndexOf('.');
  return (dot >= 0 && dot > file.lastIndexOf('/') ? TYPES[file.slice(dot)] : undefined) ?? 'application/octet-stream';
}
