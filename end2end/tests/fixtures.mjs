// Shared steps of the console tests: a page fixture that fails on any browser console
// error, sign-in, agent creation through the console, and an MCP agent (TypeScript SDK).
import { test as base, expect } from '@playwright/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import fs from 'node:fs';
import path from 'node:path';

export { expect };

export const test = base.extend({
  page: async ({ page }, use, testInfo) => {
    const errors = [];
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      // A server function that refuses (422 a field, 400, 401) answers with that status,
      // which Chromium logs as a failed resource; the page shows the refusal, and the
      // tests check it there. Anything else (a 500, a hydration panic) fails the test.
      const url = m.location()?.url ?? '';
      // The same for /mcp: a web agent's request without a token is answered 401.
      const refused = /status of 4\d\d/.test(m.text())
        && (url.startsWith(`${process.env.GRAFT_URL}/api/`) || url === `${process.env.GRAFT_URL}/mcp`);
      if (!refused) errors.push(`console: ${m.text()} (${url})`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    await use(page);
    // a test that provokes an error on purpose names it (annotation
    // `expected-console-error`, matched as a substring)
    const expected = testInfo.annotations
      .filter((a) => a.type === 'expected-console-error')
      .map((a) => a.description);
    const unexpected = errors.filter((e) => !expected.some((x) => e.includes(x)));
    expect(unexpected, 'browser console errors').toEqual([]);
  },
});

/** A name unique to this project, e.g. `ops-hydrated`. */
export function unique(testInfo, name) {
  return `${name}-${testInfo.project.name}`;
}

/** Saves a screenshot under test-results/screenshots/<project>/<name>.png. */
export async function shot(page, testInfo, name) {
  const dir = path.join('test-results', 'screenshots', testInfo.project.name);
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** Waits until the page is hydrated (hydrated project only): clicks before it would be plain posts. */
export async function ready(page, testInfo) {
  if (testInfo.project.name === 'hydrated') {
    await page.locator('body[data-hydrated="true"]').waitFor();
  }
}

export async function goto(page, testInfo, url) {
  await page.goto(url);
  await ready(page, testInfo);
}

export async function signIn(page, testInfo) {
  await goto(page, testInfo, '/login');
  await page.getByLabel('Name').fill('admin');
  await page.getByLabel('Password').fill(process.env.GRAFT_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/:\d+\/$/);
  await ready(page, testInfo);
}

/** Creates an agent in the console; returns its token as the page shows it once. */
export async function createAgent(page, testInfo, name, harness = 'hermes') {
  await goto(page, testInfo, '/agents');
  const form = page.locator('#new-agent form');
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Harness').selectOption(harness);
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(page).toHaveURL(new RegExp(`/agents/${name}/token\\?reveal=`));
  const token = await page.locator('pre.token').getAttribute('data-token');
  expect(token).toMatch(/^graft_[0-9a-f]{64}$/);
  await ready(page, testInfo);
  return token;
}

/** An agent connected over MCP (TypeScript SDK, Streamable HTTP) counting list_changed. */
export async function connectAgent(token) {
  const transport = new StreamableHTTPClientTransport(new URL(`${process.env.GRAFT_URL}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'graft-e2e', version: '1.0.0' });
  const agent = { client, changes: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { agent.changes += 1; });
  await client.connect(transport);
  agent.call = async (name, args = {}) => client.callTool({ name, arguments: args });
  agent.toolNames = async () => (await client.listTools()).tools.map((t) => t.name);
  agent.waitForChanges = async (n) => {
    await expect.poll(() => agent.changes, { timeout: 10_000 }).toBeGreaterThanOrEqual(n);
  };
  return agent;
}
