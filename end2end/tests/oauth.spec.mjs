// OAuth clients (issue 26): the TypeScript SDK's OAuth support against Graft's own
// authorization server, with the person's sign-in and consent done in Chromium. The SDK
// finds the authorization server from /mcp's 401, registers, and hands over the
// authorization URL; the page signs in, comes back to the consent, approves as a new
// agent; the redirect to the client is caught; the SDK exchanges the code (PKCE) and
// calls tools as that agent, whose page then lists the client.
import { test, expect, unique, ready, shot } from './fixtures.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

class MemoryProvider {
  constructor(redirect, name) {
    this.redirect = redirect;
    this.name = name;
    this.authUrl = null;
  }
  get redirectUrl() { return this.redirect; }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() { return this.client; }
  saveClientInformation(c) { this.client = c; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  redirectToAuthorization(url) { this.authUrl = url; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

test('an OAuth client signs in through the consent page and acts as the agent a person chose', async ({ page }, testInfo) => {
  const agentName = unique(testInfo, 'oauth-ts');
  const clientName = `TypeScript SDK ${testInfo.project.name}`;
  const callback = 'http://127.0.0.1:53781/callback';
  const mcp = new URL(`${process.env.GRAFT_URL}/mcp`);
  const provider = new MemoryProvider(callback, clientName);

  const first = new Client({ name: 'graft-e2e-oauth', version: '1.0.0' });
  const pending = new StreamableHTTPClientTransport(mcp, { authProvider: provider });
  await expect(first.connect(pending)).rejects.toThrow();
  expect(provider.authUrl?.toString()).toContain('/oauth/authorize?');
  expect(provider.authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(provider.authUrl.searchParams.get('resource')).toBe(mcp.toString());

  // the person: signed out, so to the sign-in page first, then back to the consent
  await page.goto(provider.authUrl.toString());
  await expect(page).toHaveURL(/\/login\?next=/);
  await ready(page, testInfo);
  await page.getByLabel('Name').fill('admin');
  await page.getByLabel('Password').fill(process.env.GRAFT_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/oauth\/authorize\?/);
  await expect(page.getByRole('heading', { name: `Connect ${clientName} to Graft?` })).toBeVisible();
  await expect(page.getByText('It registered itself')).toBeVisible();
  await page.getByRole('radio', { name: 'A new agent', exact: true }).check();
  await page.getByRole('textbox', { name: 'New agent name' }).fill(agentName);
  await shot(page, testInfo, 'oauth-consent');

  let answer = null;
  await page.route(`${callback}**`, (route) => {
    answer = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
  });
  await page.getByRole('button', { name: 'Approve' }).click();
  await expect.poll(() => answer?.searchParams.get('code')).toBeTruthy();
  expect(answer.searchParams.get('iss')).toBe(process.env.GRAFT_URL);
  await pending.finishAuth(answer.searchParams.get('code'));
  expect(provider.saved.access_token).toMatch(/^graft_oat_/);

  const client = new Client({ name: 'graft-e2e-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcp, { authProvider: provider }));
  const r = await client.callTool({ name: 'promote', arguments: { vendor: 'widgets', name: 'list_widgets' } });
  expect(r.isError).toBeFalsy();
  expect((await client.listTools()).tools.map((t) => t.name)).toContain('widgets__list_widgets');
  await client.close();

  // the chosen agent's page: its working set and the OAuth client
  await page.goto(`/agents/${agentName}`);
  await ready(page, testInfo);
  await expect(page.locator('tr[data-tool="widgets__list_widgets"]')).toBeVisible();
  const row = page.locator(`tr[data-oauth-client="${clientName}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText('admin');
  await shot(page, testInfo, 'oauth-agent-page');
});
