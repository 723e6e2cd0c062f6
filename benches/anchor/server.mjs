// The anchor of the overhead benchmark (issue 15): the MCP server a user would write
// instead of Graft, with the official TypeScript SDK (McpServer +
// StreamableHTTPServerTransport, sessions, JSON responses like Graft's), proxying one
// tool to the same local vendor with fetch. Listens on 127.0.0.1:0 and prints
// `listening PORT` on stdout.
//
//   VENDOR_URL=http://127.0.0.1:PORT node benches/anchor/server.mjs
//
// Module resolution: run from a folder whose node_modules has @modelcontextprotocol/sdk
// (end2end/ installs it); NODE_PATH does not apply to ES modules, so the benchmark
// passes the SDK's folder as ANCHOR_SDK.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const sdk = process.env.ANCHOR_SDK;
const load = (p) => import(pathToFileURL(path.join(sdk, p)).href);
const { McpServer } = await load('dist/esm/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('dist/esm/server/streamableHttp.js');
const { isInitializeRequest } = await load('dist/esm/types.js');
const zodPath = process.env.ANCHOR_ZOD;
const { z } = await import(pathToFileURL(zodPath).href);

const vendor = process.env.VENDOR_URL;
const transports = new Map();

function makeServer() {
  const server = new McpServer({ name: 'anchor', version: '1.0.0' });
  server.registerTool(
    'echo__get_item',
    { description: 'Get an item from the echo vendor.', inputSchema: { id: z.number() } },
    async ({ id }) => {
      const r = await fetch(`${vendor}/items/${id}`);
      const text = await r.text();
      let structured;
      try { structured = JSON.parse(text); } catch { structured = undefined; }
      return { content: [{ type: 'text', text }], structuredContent: structured };
    },
  );
  return server;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try { resolve(raw ? JSON.parse(raw) : undefined); } catch (e) { reject(e); }
    });
    req.on('error', reject);
  });
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const sid = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    let transport = sid ? transports.get(sid) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(sid ? 404 : 400).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) res.writeHead(500).end(String(e));
  }
});
httpServer.keepAliveTimeout = 60_000;
httpServer.listen(0, '127.0.0.1', () => {
  console.log(`listening ${httpServer.address().port}`);
});
