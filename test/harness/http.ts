// The few HTTP calls tests make against a hub, written once.

/** A response's JSON body, untyped: tests assert on its fields. */
export const json = async (res: Response) => (await res.json()) as any;

/** POST a JSON body; resolves to the response's JSON. */
export const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(json);

/** PATCH /admin/workers/:id {status} on `hubUrl` (a hub or nginx); resolves to the response. */
export const patchWorkerStatus = (hubUrl: string, workerId: string, status: string, headers: Record<string, string> = {}) =>
  fetch(`${hubUrl}/admin/workers/${workerId}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ status }) });
