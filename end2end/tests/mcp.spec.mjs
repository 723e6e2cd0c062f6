// MCP servers as vendors in the console (issue 27.1, 27.5), hydrated and without
// JavaScript: a person adds the reference server (@modelcontextprotocol/server-everything,
// from npm beside the conformance suite) as a local server on the Vendors page; its page
// shows the server, its state, its tools and a Refresh button; its connections are
// environment variables; its tools are in the Toolbox; an agent on the TypeScript SDK
// promotes and calls one.
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import { test, expect, unique, shot, goto, signIn, createAgent, connectAgent } from './fixtures.mjs';

const EVERYTHING = fileURLToPath(new URL(
  '../../tests/conformance/node_modules/@modelcontextprotocol/server-everything/dist/index.js',
  import.meta.url,
));

test('a person adds an MCP server on the Vendors page and an agent calls its tools (issue 27)', async ({ page }, testInfo) => {
  test.skip(!fs.existsSync(EVERYTHING) && process.env.GRAFT_CONFORMANCE_REQUIRED !== '1',
    'server-everything is not installed (npm ci in tests/conformance)');
  await signIn(page, testInfo);
  const slug = unique(testInfo, 'everything');
  await goto(page, testInfo, '/vendors');
  const form = page.locator('#mcp form');
  // shell syntax is refused at its field, nothing is created
  await form.getByLabel('Slug').fill(slug);
  await form.getByLabel('Name').fill('Everything');
  await form.getByLabel('Or a local server: the command that starts it').fill(`${process.execPath} ${EVERYTHING} stdio | tee log`);
  await form.getByRole('button', { name: 'Add the MCP server' }).click();
  await expect(page.locator('#mcp')).toContainText('without a shell');
  await page.locator('#mcp form').getByLabel('Slug').fill(slug);
  await page.locator('#mcp form').getByLabel('Name').fill('Everything');
  await page.locator('#mcp form').getByLabel('Or a local server: the command that starts it').fill(`${process.execPath} ${EVERYTHING} stdio`);
  await page.locator('#mcp form').getByRole('button', { name: 'Add the MCP server' }).click();

  // its page: the server, running in this Graft, its tools read
  await expect(page).toHaveURL(new RegExp(`/vendors/${slug}$`));
  const server = page.locator('#server');
  await expect(server.locator('code.server')).toContainText('local MCP server:');
  await expect(server).toContainText(/\d+ tools from its tools\/list/);
  await expect(server.locator('[data-state]')).toHaveAttribute('data-state', 'running');
  await expect(server).toContainText('Last read');
  await server.getByRole('button', { name: 'Refresh its tools' }).click();
  if (testInfo.project.name === 'hydrated') {
    await expect(server.getByRole('status')).toContainText('Read again');
  }
  await expect(page.locator('#server')).toContainText(/\d+ tools from its tools\/list/);
  // a local server's connections are environment variables
  const kinds = await page.locator('#connections select[name="kind"] option').allTextContents();
  expect(kinds).toEqual(['environment variable of its process']);
  await expect(page.locator('#network')).toBeHidden();
  await shot(page, testInfo, 'mcp-vendor');

  // the Vendors list says where its tools come from
  await goto(page, testInfo, '/vendors');
  await expect(page.locator(`tr[data-vendor="${slug}"]`).first()).toContainText("its MCP server's tools/list");

  // its tools are in the Toolbox; the tool page names the server's tool
  await goto(page, testInfo, `/tools/${slug}/get_sum`);
  await expect(page.locator('main')).toContainText("the server's tool get-sum");
  await shot(page, testInfo, 'mcp-tool');

  // an agent promotes and calls one
  const agent = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'mcp-agent')));
  const promoted = await agent.call('promote', { vendor: slug, name: 'get_sum' });
  expect(promoted.isError).toBeFalsy();
  const sum = await agent.call('run_tool', { vendor: slug, name: 'get_sum', input: { a: 20, b: 22 } });
  expect(sum.isError).toBeFalsy();
  expect(JSON.stringify(sum.content)).toContain('42');
  await agent.client.close();

  await page.setViewportSize({ width: 375, height: 800 });
  await goto(page, testInfo, `/vendors/${slug}`);
  await expect(page.locator('#server')).toBeVisible();
  await shot(page, testInfo, 'mcp-vendor-375');
});
