// The console's scenarios (issue 5), run hydrated and with JavaScript disabled.
import { test, expect, unique, shot, goto, ready, signIn, createAgent, connectAgent } from './fixtures.mjs';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';

test('sign in, land on the home page, see the agents list, sign out', async ({ page }, testInfo) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/login\?next=%2F$/);
  // sign in on that page, so its `next` takes the person back to /
  await ready(page, testInfo);
  await page.getByLabel('Name').fill('admin');
  await page.getByLabel('Password').fill(process.env.GRAFT_ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/:\d+\/$/);
  await ready(page, testInfo);
  // the home page, hydrated or not (the hydrated console once had no page at /)
  await expect(page.getByRole('heading', { level: 1, name: 'Graft' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Not found' })).toHaveCount(0);
  await shot(page, testInfo, 'home');
  await goto(page, testInfo, '/agents');
  await expect(page.getByRole('heading', { level: 1, name: 'Agents' })).toBeVisible();
  await shot(page, testInfo, 'agents');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto('/approvals');
  await expect(page).toHaveURL(/\/login\?next=%2Fapprovals/);
});

test('a wrong password is refused', async ({ page }, testInfo) => {
  await goto(page, testInfo, '/login');
  await page.getByLabel('Name').fill('admin');
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Wrong name or password.');
  await shot(page, testInfo, 'login-refused');
});

test('the password change shows that it is busy, and a wrong current password is refused at its field', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  await goto(page, testInfo, '/account');
  const form = page.locator('form', { has: page.getByLabel('Current password') });
  await form.getByLabel('Current password').fill('not the password');
  await form.getByLabel('New password (10 characters or more)').fill('a-new-password-123');
  await form.getByLabel('New password again').fill('a-new-password-123');
  if (testInfo.project.name === 'hydrated') {
    // hold the request so that the busy state can be seen: the button says so and
    // cannot be pressed twice
    let release;
    const held = new Promise((r) => { release = r; });
    await page.route('**/api/change_password*', async (route) => { await held; await route.continue(); });
    await form.getByRole('button', { name: 'Change password' }).click();
    const busy = form.getByRole('button', { name: 'Changing…' });
    await expect(busy).toBeDisabled();
    await shot(page, testInfo, 'password-busy');
    release();
    await expect(form.getByRole('button', { name: 'Change password' })).toBeEnabled();
  } else {
    await form.getByRole('button', { name: 'Change password' }).click();
  }
  await expect(page.locator('[data-field="current"].field-error')).toBeVisible();
  await expect(page.getByText('Password changed.')).toHaveCount(0);
});

test('create an agent: its token once, with client configurations', async ({ page, request }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'laptop');
  const token = await createAgent(page, testInfo, name, 'codex');
  for (const client of ['Claude Code', 'Claude Code (.mcp.json)', 'Cursor', 'VS Code', 'Codex CLI', 'Hermes', 'OpenClaw']) {
    await expect(page.locator(`pre[data-client="${client}"]`)).toBeVisible();
  }
  // the harness chosen at creation comes first
  await expect(page.locator('pre[data-client]').first()).toHaveAttribute('data-client', 'Codex CLI');
  if (testInfo.project.name === 'hydrated') {
    // a copy button for the token and each snippet (the Clipboard API)
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    // the token, 7 configurations, and the shell lines of the 6 that read an environment
    // variable (VS Code asks for the token itself)
    await expect(page.getByRole('button', { name: /^Copy / })).toHaveCount(14);
    await page.getByRole('button', { name: 'Copy the token' }).click();
    await expect(page.getByRole('button', { name: 'Copy the token' })).toHaveText('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    // each configuration's Copy button copies a block its client's parser reads, with
    // Graft's /mcp address and no token (issue 28.5)
    const copied = async (client) => {
      const block = page.locator('.copyable', { has: page.locator(`pre[data-client="${client}"]`) });
      await block.getByRole('button', { name: 'Copy the configuration' }).click();
      const text = await page.evaluate(() => navigator.clipboard.readText());
      expect(text, client).not.toContain(token);
      return text;
    };
    const mcpUrl = new URL('/mcp', page.url()).href;
    const codex = parseToml(await copied('Codex CLI'));
    expect(codex.mcp_servers.graft).toEqual({ url: mcpUrl, bearer_token_env_var: 'GRAFT_TOKEN' });
    const hermes = parseYaml(await copied('Hermes'));
    expect(hermes.mcp_servers.graft).toEqual({ url: mcpUrl, headers: { Authorization: 'Bearer ${GRAFT_AGENT_TOKEN}' } });
    const cursor = JSON.parse(await copied('Cursor'));
    expect(cursor.mcpServers.graft.headers.Authorization).toBe('Bearer ${env:GRAFT_TOKEN}');
    const openclaw = JSON.parse(await copied('OpenClaw'));
    expect(openclaw.mcp.servers.graft).toMatchObject({ url: mcpUrl, transport: 'streamable-http' });
    const claude = JSON.parse(await copied('Claude Code (.mcp.json)'));
    expect(claude.mcpServers.graft).toMatchObject({ type: 'http', url: mcpUrl });
    const vscode = JSON.parse(await copied('VS Code'));
    expect(vscode.inputs[0]).toMatchObject({ id: 'graft-token', password: true });
    // the shell line beside Hermes's file sets the variable that file reads
    const hermesBlock = page.locator('.copyable', { has: page.locator('pre[data-shell]') })
      .filter({ hasText: 'GRAFT_AGENT_TOKEN' });
    await hermesBlock.getByRole('button', { name: 'Copy the shell line' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`export GRAFT_AGENT_TOKEN=${token}`);
  } else {
    // without JavaScript nothing pretends to copy; the text is selectable
    await expect(page.getByRole('button', { name: /^Copy / })).toHaveCount(0);
  }
  // no configuration holds the token: each reads it from the shell line beside it
  await expect(page.locator('pre[data-client="Claude Code"]')).toContainText('Authorization: Bearer $GRAFT_TOKEN');
  await expect(page.locator('pre[data-client]').filter({ hasText: token })).toHaveCount(0);
  await expect(page.locator('pre[data-client="OpenClaw"]')).toContainText('"transport": "streamable-http"');
  // a configuration file gets no shell line (issue 28.6): the token's export is a block of its own
  for (const client of ['Codex CLI', 'Hermes', 'Claude Code (.mcp.json)']) {
    await expect(page.locator(`pre[data-client="${client}"]`)).not.toContainText('export');
  }
  await expect(page.locator('pre[data-client="Claude Code (.mcp.json)"]')).not.toContainText(token);
  await expect(page.locator('pre[data-client="Claude Code (.mcp.json)"]')).toContainText('"type": "http"');
  await expect(page.locator('pre[data-shell]')).toHaveCount(6);
  await expect(page.locator('pre[data-shell]').first()).toHaveText(`export GRAFT_TOKEN=${token}`);
  await shot(page, testInfo, 'new-agent-token');
  const skill = await request.get(await page.getByRole('link', { name: '/skill/SKILL.md' }).getAttribute('href'));
  expect(await skill.text()).toContain('name: graft');
  // the token works, and is not shown again
  const agent = await connectAgent(token);
  expect(await agent.toolNames()).toContain('find_tool');
  await agent.client.close();
  await page.reload();
  await expect(page.getByText('This token was shown already')).toBeVisible();
});

test('edit the cap: 0 and 501 are refused at the field, 30 is saved', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'capped');
  await createAgent(page, testInfo, name);
  await goto(page, testInfo, `/agents/${name}`);
  const form = page.locator('#settings form');
  for (const bad of ['0', '501']) {
    await form.getByLabel(/^Cap/).fill(bad);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect(page.locator('#settings .field-error[data-field="cap"]'))
      .toHaveText(`cap must be between 1 and 500 tools (got ${bad})`);
    await ready(page, testInfo);
  }
  await shot(page, testInfo, 'cap-refused');
  await goto(page, testInfo, '/agents');
  await expect(page.locator(`tr[data-agent="${name}"] td`).nth(2)).toHaveText('0 / 20');

  await goto(page, testInfo, `/agents/${name}`);
  await form.getByLabel(/^Cap/).fill('30');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('#settings [role="status"]')).toContainText('Saved');
  await expect(page.locator('#settings .field-error')).toHaveCount(0);
  await goto(page, testInfo, '/agents');
  await expect(page.locator(`tr[data-agent="${name}"] td`).nth(2)).toHaveText('0 / 30');
  await shot(page, testInfo, 'cap-saved');

  // from Edit in the list too, with the warning rules on the agent page
  const row = page.locator(`tr[data-agent="${name}"]`);
  await row.getByText('Edit').click();
  await row.getByLabel('Cap').fill('150');
  await row.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator(`tr[data-agent="${name}"] td`).nth(2)).toHaveText('0 / 150');
  await goto(page, testInfo, `/agents/${name}`);
  await expect(page.locator('#settings .warning')).toContainText('Above 122 tools');
});

test('a token budget: 0 and 500,001 are refused at the field, 5,000 is saved (issue 29)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'budgeted');
  await createAgent(page, testInfo, name);
  await goto(page, testInfo, `/agents/${name}`);
  const form = page.locator('#settings form');
  for (const bad of ['0', '500001']) {
    await form.getByLabel(/^Token budget/).fill(bad);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect(page.locator('#settings .field-error[data-field="token_budget"]'))
      .toHaveText(`token budget must be between 1,000 and 500,000 tokens, or none (got ${bad})`);
    await ready(page, testInfo);
  }
  await shot(page, testInfo, 'token-budget-refused');
  await form.getByLabel(/^Token budget/).fill('5,000');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('#settings [role="status"]')).toContainText('Saved');
  await expect(page.locator('#settings .field-error')).toHaveCount(0);
  await goto(page, testInfo, `/agents/${name}`);
  await expect(page.locator('main p.muted').first()).toContainText('0 of 5,000 tokens');
  await expect(page.locator('#settings form').getByLabel(/^Token budget/)).toHaveValue('5000');
});

test('the agent promotes over MCP and calls: the page shows it; a demotion in the console notifies the agent', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'worker');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  const promoted = await agent.call('promote', { vendor: 'widgets', name: 'list_widgets' });
  expect(promoted.structuredContent).toMatchObject({ size: 1, cap: 20 });
  const tokens = promoted.structuredContent.tokens;
  expect(tokens).toBeGreaterThan(20);

  await goto(page, testInfo, `/agents/${name}`);
  const row = page.locator('tr[data-tool="widgets__list_widgets"]');
  await expect(row.locator('.promoted-by')).toHaveText('the agent');
  // the tool's tokens as the agent was told (issue 29.1)
  await expect(row.locator('td.tokens')).toHaveText(tokens.toLocaleString('en-US'));
  await expect(row.locator('.last-used')).toHaveText('never');
  await shot(page, testInfo, 'promoted-by-agent');

  const result = await agent.call('widgets__list_widgets', {});
  expect(result.isError).toBeFalsy();
  await page.reload();
  await ready(page, testInfo);
  await expect(row.locator('.last-used')).toHaveText('just now');
  await expect(row.locator('.last-used time')).toHaveAttribute('title', /UTC$/);
  await expect(row.locator('.calls')).toHaveText('1');

  const before = agent.changes;
  await row.getByRole('button', { name: 'Demote widgets__list_widgets' }).click();
  await expect(page.locator('tr[data-tool="widgets__list_widgets"]')).toHaveCount(0);
  await expect(page.locator('#history .cause').first()).toHaveText('by admin');
  await expect(page.locator('#history .cause').nth(1)).toHaveText('the agent asked');
  await agent.waitForChanges(before + 1);
  expect(await agent.toolNames()).not.toContain('widgets__list_widgets');
  await expect(page.getByRole('img', { name: /^Working-set size over time/ })).toBeVisible();
  // the tokens chart: the promoted tool's tokens at its peak (issue 29.1)
  await expect(page.getByRole('img', { name: /^Working-set tokens over time/ }))
    .toHaveAttribute('aria-label', new RegExp(`now 0, highest ${tokens.toLocaleString('en-US')},`));
  await shot(page, testInfo, 'demoted-in-console');

  // promote from the toolbox search on the same page
  await page.getByLabel('Search the toolbox').fill('zqxv wubble');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await ready(page, testInfo);
  await expect(page.locator('.no-match')).toContainText('No tool matches "zqxv wubble"');
  await page.getByLabel('Search the toolbox').fill('widget');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await ready(page, testInfo);
  await expect(page.locator('li[data-tool="widgets__create_widget"] .score')).toContainText(/score \d/);
  await shot(page, testInfo, 'agent-search');
  await page.getByRole('button', { name: 'Promote widgets__create_widget' }).click();
  await expect(page.locator('tr[data-tool="widgets__create_widget"] .promoted-by')).toHaveText('a person');
  await agent.waitForChanges(before + 2);
  expect(await agent.toolNames()).toContain('widgets__create_widget');
  await agent.client.close();
});

test('approve a pending write: the agent retries and succeeds', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'writer');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  const input = { vendor: 'widgets', name: 'create_widget', input: { name: `w-${name}` } };
  const first = await agent.call('run_tool', input);
  expect(first.isError).toBe(true);
  expect(first.structuredContent.error.code).toBe('approval_required');

  // the link the agent hands its user names the row; the row shows what is approved
  await goto(page, testInfo, `/approvals?agent=${name}&tool=widgets__create_widget`);
  const banner = page.locator('main > p[role]').filter({ hasText: name });
  await expect(banner).toHaveText(`${name} asks to run widgets__create_widget: approve or deny it below.`);
  const row = page.locator(`tr[data-agent="${name}"][data-tool="widgets__create_widget"]`);
  await expect(row).toHaveAttribute('data-state', 'pending');
  await expect(row.locator('.request')).toHaveText('POST /widgets');
  await expect(row.locator('.asked-input')).toContainText(`"name":"w-${name}"`);
  // the nav counts what waits, and counts one less once this one is decided
  const count = page.locator('nav .count');
  await expect(count).toHaveText(/^[1-9]\d*$/);
  const before = Number(await count.textContent());
  await shot(page, testInfo, 'approval-pending');
  await row.getByRole('button', { name: `Approve widgets__create_widget for ${name}`, exact: true }).click();
  await expect(page.locator(`tr[data-agent="${name}"][data-tool="widgets__create_widget"]`)).toHaveAttribute('data-state', 'granted');
  await expect(banner).toHaveText(`Approved: ${name} may run widgets__create_widget.`);
  if (before === 1) {
    await expect(count).toHaveCount(0);
  } else {
    await expect(count).toHaveText(String(before - 1));
  }

  const retry = await agent.call('run_tool', input);
  expect(retry.isError).toBeFalsy();
  expect(JSON.stringify(retry.structuredContent ?? retry.content)).toContain(`w-${name}`);
  await shot(page, testInfo, 'approval-granted');

  // the agent's page lists both calls, newest first; a link narrows them to failures
  await goto(page, testInfo, `/agents/${name}`);
  const calls = page.locator('#calls tbody tr');
  await expect(calls).toHaveCount(2);
  await expect(calls.nth(0)).toHaveAttribute('data-outcome', 'ok');
  await expect(calls.nth(0).locator('.outcome')).toContainText('HTTP 201');
  await expect(calls.nth(1)).toHaveAttribute('data-outcome', 'waits for approval');
  await page.locator('#calls nav.filters').getByRole('link', { name: 'Approvals' }).click();
  await expect(page).toHaveURL(/calls=approval/);
  await ready(page, testInfo);
  await expect(calls).toHaveCount(1);
  await expect(calls.nth(0)).toHaveAttribute('data-outcome', 'waits for approval');
  await page.locator('#calls').scrollIntoViewIfNeeded();
  await shot(page, testInfo, 'agent-calls');
  await agent.client.close();
});

test('revoke a connection: the tools it serves are demoted with that cause', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'gadgets');
  const label = `key-${testInfo.project.name}`;
  // a vendor uploaded in the console, and its connection
  await goto(page, testInfo, '/vendors');
  const upload = page.locator('form[action="/vendors/import"]');
  await upload.getByLabel('Vendor slug').fill(vendor);
  await upload.getByLabel('Document').setInputFiles({
    name: 'gadgets.yaml', mimeType: 'application/yaml', buffer: fs.readFileSync(process.env.E2E_SPEC),
  });
  await upload.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-summary')).toContainText(`Vendor ${vendor}, 3 operations: 3 new tools.`);
  // kept in the import history, not only until the page reloads
  await expect(page.locator(`#imports tr[data-vendor="${vendor}"]`)).toContainText('3 new tools');
  await ready(page, testInfo);
  await shot(page, testInfo, 'import-summary');
  // a connection is added on its vendor's page
  await page.getByRole('link', { name: `Add a connection to ${vendor}` }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors/${vendor}#connections$`));
  await ready(page, testInfo);
  const add = page.locator('form[action="/api/add_connection"]');
  await add.getByLabel('Label').fill(label);
  await add.getByLabel('Kind').selectOption('bearer');
  await add.getByLabel('Secret (write-only)').fill(process.env.VENDOR_SECRET);
  await add.getByRole('button', { name: 'Add connection' }).click();
  await expect(page.locator(`tr[data-connection="${label}"]`)).toContainText('active');
  expect(await page.content()).not.toContain(process.env.VENDOR_SECRET);
  // the form is empty again: the secret is not left in the page
  await expect(page.locator('form[action="/api/add_connection"]').getByLabel('Secret (write-only)')).toHaveValue('');

  const name = unique(testInfo, 'holder');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  await agent.call('promote', { vendor, name: 'list_widgets' });
  const used = await agent.call(`${vendor}__list_widgets`, {});
  expect(used.isError).toBeFalsy();

  await goto(page, testInfo, '/vendors');
  const before = agent.changes;
  // a second step: the summary opens what revoking does, and its button does it
  await page.locator(`tr[data-connection="${label}"] summary`, { hasText: 'Revoke' }).click();
  await expect(page.locator(`tr[data-connection="${label}"] .confirm-body`, { hasText: 'is never sent again' })).toBeVisible();
  await shot(page, testInfo, 'connection-revoke-confirm');
  await page.getByRole('button', { name: `Revoke ${label}` }).click();
  await expect(page.locator(`tr[data-connection="${label}"]`)).toContainText('revoked');
  await agent.waitForChanges(before + 1);
  await goto(page, testInfo, `/agents/${name}`);
  await expect(page.locator('#history .cause').first()).toHaveText('its connection was revoked, by admin');
  await expect(page.locator(`tr[data-tool="${vendor}__list_widgets"]`)).toHaveCount(0);
  await shot(page, testInfo, 'connection-revoked');
  await agent.client.close();
});

test('a vendor page: its connection starts from the document, and removing asks first', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'keyed');
  const doc = [
    'openapi: 3.0.3',
    'info: {title: Keyed, version: "1"}',
    `servers: [{url: "${process.env.E2E_VENDOR_URL}"}]`,
    'components: {securitySchemes: {oauth: {type: oauth2, flows: {}}, key: {type: apiKey, in: header, name: X-Api-Key}}}',
    'paths: {/things: {get: {operationId: listThings, summary: List things, responses: {"200": {description: ok}}}}}',
  ].join('\n');
  await goto(page, testInfo, '/vendors');
  const upload = page.locator('form[action="/vendors/import"]');
  await upload.getByLabel('Vendor slug').fill(vendor);
  await upload.getByLabel('Document').setInputFiles({ name: 'keyed.yaml', mimeType: 'application/yaml', buffer: Buffer.from(doc) });
  await upload.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-summary')).toContainText('1 new tool');

  await goto(page, testInfo, `/vendors/${vendor}`);
  const add = page.locator('#connections form[action="/api/add_connection"]');
  await expect(add.getByLabel('Kind')).toHaveValue('header');
  await expect(add.getByLabel('Header or query parameter name')).toHaveValue('X-Api-Key');
  await expect(add.locator('.hint')).toHaveText(`${vendor}'s document asks for the header X-Api-Key.`);
  // an error lands at its field
  await add.getByLabel('Label').fill('main');
  await add.getByLabel('Kind').selectOption('query');
  await add.getByLabel('Secret (write-only)').fill('short');
  await add.getByRole('button', { name: 'Add connection' }).click();
  await ready(page, testInfo);
  await expect(page.locator('#connections .field-error[data-field="secret"]')).toContainText('shorter than 8 characters');
  const form = page.locator('#connections form[action="/api/add_connection"]');
  if (testInfo.project.name === 'hydrated') {
    // a refused form keeps what was typed (without JavaScript the page comes back fresh)
    await expect(form.getByLabel('Kind')).toHaveValue('query');
    await expect(form.getByLabel('Label')).toHaveValue('main');
  }
  await form.getByLabel('Kind').selectOption('header');
  await form.getByLabel('Label').fill('main');
  await form.getByLabel('Secret (write-only)').fill(process.env.VENDOR_SECRET);
  await form.getByRole('button', { name: 'Add connection' }).click();
  await expect(page.locator('#connections tr[data-connection="main"]')).toContainText('header (X-Api-Key)');
  await expect(page.locator('#connections form[action="/api/add_connection"]').getByLabel('Secret (write-only)')).toHaveValue('');
  await ready(page, testInfo);
  await shot(page, testInfo, 'vendor-page');

  // Remove needs its box ticked: the browser keeps the form until it is
  const remove = page.locator('#remove form');
  await remove.getByRole('button', { name: 'Remove the vendor' }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors/${vendor}(\\?saved=connection)?$`));
  await remove.getByRole('checkbox').check();
  await shot(page, testInfo, 'vendor-remove-confirm');
  await remove.getByRole('button', { name: 'Remove the vendor' }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors\\?removed=${vendor}$`));
  await expect(page.getByRole('status').filter({ hasText: `Vendor ${vendor} was removed` })).toBeVisible();
  await expect(page.locator(`a[href="/vendors/${vendor}"][title]`)).toHaveCount(0);
  await shot(page, testInfo, 'vendor-removed');
  await goto(page, testInfo, `/vendors/${vendor}`);
  await expect(page.getByRole('note')).toContainText('brings it back');
});

test('the toolbox browsed by vendor, searched, and a tool page', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  // without search words: every tool, by name, with what each call does in words
  await goto(page, testInfo, '/tools');
  await page.getByRole('combobox', { name: 'Vendor' }).selectOption('widgets');
  await page.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(/vendor=widgets/);
  await ready(page, testInfo);
  await expect(page.locator('tr[data-tool="widgets__create_widget"] .badge')).toHaveText('writes');
  await expect(page.locator('tr[data-tool="widgets__list_widgets"] .badge')).toHaveText('reads');
  await expect(page.locator('table.browse tbody tr')).toHaveCount(await page.locator('table.browse tbody tr[data-tool^="widgets__"]').count());
  await shot(page, testInfo, 'toolbox-browse');
  await page.getByLabel(/Search by what a tool does/).fill('create a widget');
  await page.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(/q=create/);
  await ready(page, testInfo);
  await expect(page.locator('tbody tr').first()).toHaveAttribute('data-tool', 'widgets__create_widget');
  await page.getByRole('link', { name: 'widgets__create_widget' }).click();
  await expect(page).toHaveURL(/\/tools\/widgets\/create_widget$/);
  await expect(page.getByRole('heading', { name: 'Connection' })).toBeVisible();
  await expect(page.locator('#connection strong', { hasText: 'prod' })).toBeVisible();
  await expect(page.getByText('Version 1 — POST /widgets')).toBeVisible();
  await shot(page, testInfo, 'tool-page');
  // the vendor's page: settings, state with a confirmation, import history
  await goto(page, testInfo, '/vendors/widgets');
  await expect(page.locator('#imports')).toContainText('new tools');
  await expect(page.getByRole('button', { name: 'Disable the vendor' })).toBeVisible();
  await shot(page, testInfo, 'vendor-page-import-history');
  // a phone-width view of the agents list stays usable
  await page.setViewportSize({ width: 390, height: 844 });
  await goto(page, testInfo, '/agents');
  await shot(page, testInfo, 'agents-phone');
});

test('an upload shows the bytes sent, then the summary', async ({ page }, testInfo) => {
  test.skip(testInfo.project.name !== 'hydrated', 'the progress needs JavaScript; without it the browser shows its own');
  await signIn(page, testInfo);
  await goto(page, testInfo, '/vendors');
  // a slow uplink (1 MiB/s), so a 1.8 MB document takes a while to send
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1024 * 1024,
  });
  const upload = page.locator('form[action="/vendors/import"]');
  // too big: refused in the page, nothing sent
  await upload.getByLabel('Vendor slug').fill('huge');
  await upload.getByLabel('Document').setInputFiles({
    name: 'huge.json', mimeType: 'application/json', buffer: Buffer.alloc(33 * 1024 * 1024, 'a'),
  });
  await upload.getByRole('button', { name: 'Import' }).click();
  await expect(page.getByRole('alert')).toContainText('Graft imports documents up to 32 MiB');
  await upload.getByLabel('Vendor slug').fill('twilio');
  await upload.getByLabel('Document').setInputFiles(path.join(process.env.E2E_SPECS_DIR, 'twilio_api_v2010.json'));
  await upload.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('p.upload')).toContainText(/Uploading… \d+%/);
  await expect(page.locator('p.upload progress')).toHaveAttribute('value', /\d+/);
  await shot(page, testInfo, 'upload-progress');
  await expect(page.locator('#import-summary')).toContainText(/Vendor twilio, \d+ operations: \d+ new tools/, { timeout: 30_000 });
  await shot(page, testInfo, 'upload-summary');
});

test('another page cannot frame the console (security review 32.4)', async ({ page }, testInfo) => {
  // a page on another port of the same host, framing the console: Chromium must refuse
  // to render the console inside it (frame-ancestors 'none', X-Frame-Options: DENY),
  // and says so in the console
  testInfo.annotations.push({ type: 'expected-console-error', description: "frame-ancestors 'none'" });
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<h1>elsewhere</h1><iframe id="console" width="800" height="400" src="${process.env.GRAFT_URL}/login"></iframe>`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await expect(page.getByRole('heading', { name: 'elsewhere' })).toBeVisible();
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeTruthy();
    await frame.waitForLoadState('load').catch(() => {});
    await expect(frame.getByRole('button', { name: 'Sign in' })).toHaveCount(0);
    expect(frame.url()).not.toContain('/login');
    await shot(page, testInfo, 'framed-console-refused');
  } finally {
    server.close();
  }
});

test('disable an agent: a second step, its token refused, then enabled again (issue 28.1)', async ({ page }, testInfo) => {
  testInfo.annotations.push({ type: 'expected-console-error', description: '401' });
  await signIn(page, testInfo);
  const name = unique(testInfo, 'retiring');
  const token = await createAgent(page, testInfo, name);
  const before = await connectAgent(token);
  await before.client.close();
  await goto(page, testInfo, `/agents/${name}`);
  const access = page.locator('#access');
  await access.getByText('Disable agent').click();
  await access.getByRole('button', { name: 'Disable the agent now' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'its token is refused' })).toBeVisible();
  await ready(page, testInfo);
  await shot(page, testInfo, 'agent-disabled');
  await expect(connectAgent(token)).rejects.toThrow();
  await goto(page, testInfo, '/agents');
  await expect(page.locator(`tr[data-agent="${name}"]`)).toContainText('disabled');
  await shot(page, testInfo, 'agents-with-a-disabled-one');
  await goto(page, testInfo, `/agents/${name}`);
  await page.locator('#access').getByRole('button', { name: 'Enable the agent' }).click();
  await expect(page.locator('#access').getByText('Disable agent')).toBeVisible();
  const after = await connectAgent(token);
  expect(await after.toolNames()).toContain('find_tool');
  await after.client.close();
});

test('a starter template: a new agent starts with its tools, promoted by the rule, and a write approved ahead runs (issue 31)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const tpl = unique(testInfo, 'support');
  await goto(page, testInfo, '/starters');
  await page.locator('#new-template').getByLabel('Name').fill(tpl);
  await page.getByRole('button', { name: 'Create template' }).click();
  await expect(page).toHaveURL(new RegExp(`/starters/${tpl}$`));
  await ready(page, testInfo);
  await page.getByLabel('Search the toolbox').fill('widget');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await ready(page, testInfo);
  await page.getByRole('button', { name: 'Add widgets__list_widgets' }).click();
  await expect(page.locator('tr[data-tool="widgets__list_widgets"]')).toBeVisible();
  await ready(page, testInfo);
  await page.getByRole('button', { name: 'Add widgets__create_widget' }).click();
  await expect(page.locator('tr[data-tool="widgets__create_widget"]')).toBeVisible();
  await expect(page.locator('li[data-tool="widgets__list_widgets"] .listed')).toHaveText('listed');
  await shot(page, testInfo, 'starter-template');

  // a new agent from the template: its first tools/list holds the template's tools
  const name = unique(testInfo, 'helpdesk');
  await goto(page, testInfo, '/agents');
  const form = page.locator('#new-agent form');
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Starter template').selectOption(tpl);
  await form.getByRole('button', { name: 'Create agent' }).click();
  await expect(page).toHaveURL(new RegExp(`/agents/${name}/token\\?reveal=`));
  const token = await page.locator('pre.token').getAttribute('data-token');
  const agent = await connectAgent(token);
  expect(await agent.toolNames()).toEqual(expect.arrayContaining(['widgets__list_widgets', 'widgets__create_widget']));

  await goto(page, testInfo, `/agents/${name}`);
  await expect(page.locator('tr[data-tool="widgets__list_widgets"] .promoted-by')).toHaveText('the rule');
  await expect(page.locator('#history .cause').first()).toHaveText('the starter set');
  const starter = page.locator('#starter');
  await expect(starter.getByLabel('Template')).toHaveValue(tpl);
  await expect(starter.getByRole('note').filter({ hasText: 'approval before the agent' })).toBeVisible();
  await starter.getByRole('button', { name: 'Approve widgets__create_widget now' }).click();
  await expect(starter.locator('tr[data-tool="widgets__create_widget"] .starter-approval')).toHaveText('granted');
  await ready(page, testInfo);
  await shot(page, testInfo, 'agent-starter-set');
  const first = await agent.call('widgets__create_widget', { name: `w-${name}` });
  expect(first.isError).toBeFalsy();

  // the agent's own starter tools: found and added on its page, promoted by the rule at once
  const changes = agent.changes;
  await starter.getByLabel('Find a tool to add').fill('catalog');
  await starter.getByRole('button', { name: 'Find', exact: true }).click();
  await ready(page, testInfo);
  await starter.getByRole('button', { name: 'Add widgets__get_catalog to the starter set' }).click();
  await expect(starter.locator('tr[data-tool="widgets__get_catalog"] .starter-state')).toHaveText('promoted');
  await expect(page.locator('tr[data-tool="widgets__get_catalog"] .promoted-by')).toHaveText('the rule');
  await agent.waitForChanges(changes + 1);
  expect(await agent.toolNames()).toContain('widgets__get_catalog');
  await agent.client.close();
});

test('remove an agent: a second step, its token refused, its history kept (issue 28.1)', async ({ page }, testInfo) => {
  testInfo.annotations.push({ type: 'expected-console-error', description: '401' });
  await signIn(page, testInfo);
  const name = unique(testInfo, 'leaving');
  const token = await createAgent(page, testInfo, name);
  const agent = await connectAgent(token);
  await agent.call('promote', { vendor: 'widgets', name: 'list_widgets' });
  await agent.client.close();
  await goto(page, testInfo, `/agents/${name}`);
  const access = page.locator('#access');
  await access.getByText('Remove agent').click();
  await access.getByRole('button', { name: 'Remove the agent now' }).click();
  await expect(page).toHaveURL(new RegExp(`/agents/${name}$`));
  await expect(page.getByRole('status').filter({ hasText: 'Removed' })).toBeVisible();
  await expect(page.locator('#history .cause').first()).toHaveText('the agent was removed, by admin');
  await expect(page.locator('#access')).toBeHidden();
  await ready(page, testInfo);
  await shot(page, testInfo, 'agent-removed');
  await expect(connectAgent(token)).rejects.toThrow();
  await goto(page, testInfo, '/agents');
  await expect(page.locator(`tr[data-agent="${name}"]`)).toContainText('removed');
});

test('a person says what a call does: a read made a write asks an agent for approval, and back (issue 28.7)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const agent = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'hinted')));
  await goto(page, testInfo, '/tools/widgets/get_catalog');
  await ready(page, testInfo);
  const hints = page.locator('#hints');
  await expect(hints.getByRole('heading', { name: 'What a call does' })).toBeVisible();
  await expect(hints.locator('select[name="does"]')).toHaveValue('reads');
  await hints.locator('select[name="does"]').selectOption('writes');
  await hints.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('p.hints .badge')).toHaveText('writes');
  await expect(page.locator('p.hints')).toContainText("An agent's first call needs a person's approval.");
  await expect(hints.locator('select[name="does"]')).toHaveValue('writes');
  await shot(page, testInfo, 'tool-hints-writes');
  const asked = await agent.call('run_tool', { name: 'widgets__get_catalog', input: {} });
  expect(asked.structuredContent.error.code).toBe('approval_required');
  // a person says it only reads: the agent's call runs
  await hints.locator('select[name="does"]').selectOption('reads');
  await hints.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('p.hints .badge')).toHaveText('reads');
  const ran = await agent.call('run_tool', { name: 'widgets__get_catalog', input: {} });
  expect(ran.isError).toBeFalsy();
  await agent.client.close();
});
