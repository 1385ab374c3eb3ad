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

export function contentTypeFor(file: string): string {
  const dot = file.lastIndexOf('.');
  return (dot >= 0 && dot > file.lastIndexOf('/') ? TYPES[file.slice(dot)] : undefined) ?? 'application/octet-stream';
}
