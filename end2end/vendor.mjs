// A real HTTP vendor for the browser tests: widgets (GET list, POST create) and a ~900 KB
// catalog, behind a bearer secret; `/page` (no secret) is an HTML page on this origin.
// Prints "listening PORT" once bound to 127.0.0.1:0.
import http from 'node:http';

const secret = process.env.VENDOR_SECRET;
const widgets = [{ id: 1, name: 'bolt' }];
const server = http.createServer((req, res) => {
  // a page on another loopback origin than Graft's, for the browser MCP client test
  if (req.method === 'GET' && req.url === '/page') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return res.end('<!doctype html><link rel="icon" href="data:,"><title>web agent</title><h1>A web agent on another origin</h1>');
  }
  if (req.headers.authorization !== `Bearer ${secret}`) {
    res.writeHead(401, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ error: 'unauthorized' }));
  }
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const path = req.url.split('?')[0];
    if (req.method === 'GET' && path.endsWith('/widgets')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(widgets));
    }
    if (req.method === 'GET' && path.endsWith('/catalog')) {
      // ~900 KB of JSON: near the 1 MiB a client accepts per message
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ items: Array.from({ length: 9000 }, (_, i) => ({ id: i, note: 'x'.repeat(80) })) }));
    }
    if (req.method === 'POST' && path.endsWith('/widgets')) {
      const w = { id: widgets.length + 1, ...JSON.parse(body || '{}') };
      widgets.push(w);
      res.writeHead(201, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(w));
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'not found' }));
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
