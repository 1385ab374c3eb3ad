// GET /favicon.ico: browsers and bookmarks ask for it whatever the page says; a 404 in every
// console session's log is noise. The same paprika-red square the console's page links inline.
import type { FastifyInstance } from 'fastify';

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#c53030"/><path d="M11 25V7h7a6 6 0 0 1 0 12h-3v6z" fill="#fff"/><path d="M15 11v4h3a2 2 0 0 0 0-4z" fill="#c53030"/></svg>`;

export function faviconRoutes() {
  return async (app: FastifyInstance) => {
    app.get('/favicon.ico', async (_req, reply) => reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(FAVICON_SVG));
  };
}
