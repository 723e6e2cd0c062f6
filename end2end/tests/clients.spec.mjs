// MCP clients beyond the console (issue 12): a web agent on another loopback origin
// reaching /mcp from the browser (CORS preflight), and the TypeScript SDK after an answer
// near its per-message limit.
import { test, expect, unique, signIn, createAgent, connectAgent } from './fixtures.mjs';

test('a page on another loopback origin calls /mcp: the preflight passes and the session id is readable', async ({ page }, testInfo) => {
  test.skip(testInfo.project.name !== 'hydrated', 'a web agent needs JavaScript');
  await signIn(page, testInfo);
  const token = await createAgent(page, testInfo, unique(testInfo, 'webagent'));
  await page.goto(`${process.env.E2E_VENDOR_URL}/page`);
  const answers = await page.evaluate(async ({ mcp, token }) => {
    const init = {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'web', version: '1' } },
    };
    const headers = {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    };
    const ok = await fetch(mcp, { method: 'POST', headers, body: JSON.stringify(init) });
    // JSON, or an SSE event whose data line holds it
    const text = await ok.text();
    const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean).pop();
    const body = JSON.parse(data ?? text);
    const noAuth = await fetch(mcp, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: headers.Accept },
      body: JSON.stringify(init),
    });
    return {
      status: ok.status,
      session: ok.headers.get('mcp-session-id'),
      server: body.result?.serverInfo?.name,
      noAuthStatus: noAuth.status,
      challenge: noAuth.headers.get('www-authenticate'),
    };
  }, { mcp: `${process.env.GRAFT_URL}/mcp`, token });
  expect(answers.status).toBe(200);
  expect(answers.session).toBeTruthy();
  expect(answers.server).toBeTruthy();
  expect(answers.noAuthStatus).toBe(401);
  expect(answers.challenge).toContain('Bearer');
});

test('an answer near 1 MiB is cut to the result budget and the TypeScript SDK session goes on', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const agent = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'reader')));
  const big = await agent.call('run_tool', { name: 'widgets__get_catalog', input: {} });
  expect(big.isError).toBeFalsy();
  expect(big.structuredContent).toBeUndefined();
  const text = big.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  expect(text).toContain('characters not shown');
  expect(text.length).toBeLessThanOrEqual(512 * 1024);
  const after = await agent.call('run_tool', { name: 'widgets__list_widgets', input: {} });
  expect(after.isError).toBeFalsy();
  expect(after.structuredContent).toBeUndefined(); // a JSON array is not structured content
  await agent.client.close();
});
