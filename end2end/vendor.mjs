// A real HTTP vendor for the browser tests: widgets (GET list, POST create), behind a
// bearer secret. Prints "listening PORT" once bound to 127.0.0.1:0.
import http from 'node:http';

const secret = process.env.VENDOR_SECRET;
const widgets = [{ id: 1, name: 'bolt' }];
const server = http.createServer((req, res) => {
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
