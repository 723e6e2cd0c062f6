#!/usr/bin/env node
// A tiny HTTP proxy for the MCP conformance suite, which cannot send an Authorization
// header: every request (any method, any path) is forwarded to Graft with
// `Authorization: Bearer $GRAFT_TOKEN` added. Everything else passes untouched — the
// Host and Origin headers included, which the dns-rebinding-protection scenario sets on
// purpose — and responses stream back as they arrive (SSE included). No dependencies.
//
//   GRAFT_URL=http://127.0.0.1:3000 GRAFT_TOKEN=graft_… node auth_proxy.mjs --port 3100
//
// Options (or environment): --port PORT (PROXY_PORT, default 0 = any free port),
// --host HOST (PROXY_HOST, default 127.0.0.1), --target URL (GRAFT_URL), --token TOKEN
// (GRAFT_TOKEN). Prints `auth_proxy listening on http://HOST:PORT -> TARGET` once ready.
// With PROXY_LOG=1 it logs one line per request to stderr.

import http from 'node:http';

function option(name, envName, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i !== -1 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[envName] ?? fallback;
}

const target = new URL(option('target', 'GRAFT_URL', 'http://127.0.0.1:3000'));
const token = option('token', 'GRAFT_TOKEN', '');
const host = option('host', 'PROXY_HOST', '127.0.0.1');
const port = Number(option('port', 'PROXY_PORT', '0'));
const log = process.env.PROXY_LOG === '1';

if (!token) {
  console.error('auth_proxy: set GRAFT_TOKEN (or --token)');
  process.exit(2);
}
if (target.protocol !== 'http:') {
  console.error(`auth_proxy: only http:// targets are supported, got ${target.href}`);
  process.exit(2);
}

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are not forwarded.
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade',
]);

/** Raw header pairs minus hop-by-hop ones (and any Authorization, which we set). */
function forwardHeaders(rawHeaders, drop = []) {
  const out = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || drop.includes(lower)) continue;
    out.push(name, rawHeaders[i + 1]);
  }
  return out;
}

const agent = new http.Agent({ keepAlive: true });

const server = http.createServer((req, res) => {
  const headers = forwardHeaders(req.rawHeaders, ['authorization']);
  headers.push('Authorization', `Bearer ${token}`);
  const upstream = http.request({
    protocol: target.protocol,
    hostname: target.hostname,
    port: target.port || 80,
    method: req.method,
    path: req.url, // path + query as the client sent them; the Host header is the client's
    headers, // an array of raw pairs keeps names, order and duplicates; Host passes as sent
    agent,
  });

  upstream.on('response', (up) => {
    if (log) console.error(`${req.method} ${req.url} host=${req.headers.host} origin=${req.headers.origin ?? '-'} -> ${up.statusCode} ${up.headers['content-type'] ?? ''}`);
    res.writeHead(up.statusCode, up.statusMessage, forwardHeaders(up.rawHeaders));
    res.flushHeaders(); // SSE: the client must see the headers before the first event
    up.on('data', (chunk) => res.write(chunk));
    up.on('end', () => res.end());
    up.on('error', () => res.destroy());
    up.on('aborted', () => res.destroy());
  });

  upstream.on('error', (err) => {
    if (log) console.error(`${req.method} ${req.url} -> proxy error: ${err.message}`);
    if (!res.headersSent) {
      res.writeHead(502, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: `auth_proxy: ${err.message}` }));
    } else {
      res.destroy();
    }
  });

  // The client going away (a closed SSE stream, a cancelled request) closes the upstream
  // request too: for 2026-07-28 a closed response stream is the cancellation signal.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });

  req.pipe(upstream);
});

server.keepAliveTimeout = 65_000;
server.requestTimeout = 0; // SSE streams may stay open for as long as the client wants
server.headersTimeout = 60_000;

server.listen(port, host, () => {
  const addr = server.address();
  console.log(`auth_proxy listening on http://${host}:${addr.port} -> ${target.href}`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections?.();
    agent.destroy();
    process.exit(0);
  });
}
