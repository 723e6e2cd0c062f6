// What a team does from the console alone (issue 28), hydrated and without JavaScript:
// an agent's token rotated (the old one refused to a real MCP client, the new one let
// in), the connection a tool's calls use, a new version with another input schema (and
// a schema refused), the Approvals page's Vendor filter, and the pages a person opens
// on a phone (375 px). Agents on the TypeScript SDK, the vendor is vendor.mjs.
import fs from 'node:fs';
import { test, expect, unique, shot, goto, ready, signIn, createAgent, connectAgent } from './fixtures.mjs';

const PHONE = { width: 375, height: 800 };

/** Imports run.sh's widgets document as `vendor` from the Vendors page. */
async function importVendor(page, testInfo, vendor) {
  await goto(page, testInfo, '/vendors');
  const upload = page.locator('form[action="/vendors/import"]');
  await upload.getByLabel('Vendor slug').fill(vendor);
  await upload.getByLabel('Document').setInputFiles({
    name: `${vendor}.yaml`, mimeType: 'application/yaml', buffer: fs.readFileSync(process.env.E2E_SPEC),
  });
  await upload.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.locator('#import-summary')).toContainText(`Vendor ${vendor}, 3 operations: 3 new tools.`);
  await ready(page, testInfo);
}

/** On a phone nothing scrolls sideways: the page is no wider than the window. */
async function expectNoSideScroll(page) {
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll, 'the page scrolls sideways').toBeLessThanOrEqual(inner);
}

test('rotate an agent\'s token: a second step, the new token once with its configurations, the old one refused (issue 28.1)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'rotated');
  const old = await createAgent(page, testInfo, name, 'codex');
  // a client connected with the old token, its session open while the token rotates
  const before = await connectAgent(old);
  expect(await before.toolNames()).toContain('find_tool');

  await goto(page, testInfo, `/agents/${name}`);
  const card = page.locator('section.card').filter({ has: page.getByRole('heading', { name: 'Token', exact: true }) });
  // the button is behind its summary: nothing rotates on one click
  await expect(card.getByRole('button', { name: 'Rotate the token now' })).toBeHidden();
  await card.locator('summary', { hasText: 'Rotate token' }).click();
  await expect(card.locator('.confirm-body')).toContainText('The old token stops working at once');
  await shot(page, testInfo, 'rotate-token-confirm');
  await card.getByRole('button', { name: 'Rotate the token now' }).click();

  // the page that shows the new token once, with every client's configuration
  await expect(page).toHaveURL(new RegExp(`/agents/${name}/token\\?reveal=`));
  const shown = page.locator('pre.token');
  await expect(shown).toHaveAttribute('data-token', /^graft_[0-9a-f]{64}$/);
  const token = await shown.getAttribute('data-token');
  expect(token).not.toBe(old);
  await ready(page, testInfo);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Agent ${name}`);
  await expect(page.locator('pre[data-client]')).toHaveCount(7);
  // the harness chosen at creation still comes first
  await expect(page.locator('pre[data-client]').first()).toHaveAttribute('data-client', 'Codex CLI');
  // the token is only in the shell lines that set it, each with the new one
  const shells = page.locator('pre[data-shell]');
  await expect(shells.first()).toContainText(token);
  for (const line of await shells.allTextContents()) {
    expect(line).toMatch(new RegExp(`^export [A-Z_]+=${token}$`));
  }
  await expect(page.locator('pre[data-client]').filter({ hasText: token })).toHaveCount(0);
  await expect(page.locator('main')).not.toContainText(old);
  await shot(page, testInfo, 'token-rotated');
  await page.setViewportSize(PHONE);
  // on a phone the token wraps inside the window: all of it readable
  const box = await shown.boundingBox();
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  await expectNoSideScroll(page);
  await shot(page, testInfo, 'token-rotated-375');
  await page.setViewportSize({ width: 1280, height: 900 });

  // the old token is refused, on the open session and on a new one; the new one works
  await expect(before.client.listTools()).rejects.toThrow();
  await before.client.close();
  await expect(connectAgent(old)).rejects.toThrow();
  const after = await connectAgent(token);
  expect(await after.toolNames()).toContain('find_tool');
  await after.client.close();

  // shown once: a reload does not show it again
  await page.reload();
  await ready(page, testInfo);
  await expect(page.getByText('This token was shown already')).toBeVisible();
  await expect(page.locator('pre.token')).toHaveCount(0);
  expect(await page.content()).not.toContain(token);
  // the agent page's configurations carry the placeholder, never the new token
  await goto(page, testInfo, `/agents/${name}`);
  await expect(page.locator('#connect')).toContainText('YOUR_AGENT_TOKEN');
  await expect(page.locator('#connect')).not.toContainText(token);
  // and the rotation is audited under the person's name
  await goto(page, testInfo, `/audit?action=agent.rotate_token&target=${name}`);
  const rows = page.locator('table.audit tbody tr');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('admin');
  await expect(rows.first()).toContainText("replaced an agent's token");
});

test('a tool\'s calls use the connection chosen on its page, kept after a reload (issue 28.10)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'routed');
  await importVendor(page, testInfo, vendor);
  // two connections: the vendor's default holds a key the vendor refuses
  await goto(page, testInfo, `/vendors/${vendor}`);
  const add = () => page.locator('#connections form[action="/api/add_connection"]');
  const row = (label) => page.locator(`tr[data-connection="${label}"]`);
  await add().getByLabel('Label').fill('wrong');
  await add().getByLabel('Secret (write-only)').fill('not-the-right-key-1');
  await add().getByRole('button', { name: 'Add connection' }).click();
  await expect(row('wrong')).toContainText('active');
  await ready(page, testInfo);
  await add().getByLabel('Label').fill('right');
  await add().getByLabel('Secret (write-only)').fill(process.env.VENDOR_SECRET);
  await expect(add().locator('fieldset.choice')).toContainText('has a connection already (wrong)');
  await add().getByLabel(/the current one/).check();
  await add().getByRole('button', { name: 'Add connection' }).click();
  await expect(row('right')).toContainText('active');
  await expect(row('wrong').locator('.badge')).toHaveText('default');
  await ready(page, testInfo);

  // an agent's call goes with the vendor's default, and the vendor refuses it
  const agent = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'routed-agent')));
  const input = { vendor, name: 'list_widgets', input: {} };
  const refused = await agent.call('run_tool', input);
  expect(refused.isError).toBe(true);
  expect(refused.structuredContent.error).toMatchObject({ code: 'vendor_error', status: 401 });

  // the tool page: its calls use the right connection from now on
  const url = `/tools/${vendor}/list_widgets`;
  await goto(page, testInfo, url);
  const card = page.locator('#connection');
  await expect(card.locator('strong')).toHaveText('wrong');
  await expect(card).toContainText("the vendor's default");
  await expect(card.getByLabel('Calls use')).toHaveValue('');
  await card.getByLabel('Calls use').selectOption({ label: 'right' });
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(card.getByRole('status')).toContainText('Saved.');
  await expect(card.locator('strong')).toHaveText('right');
  await expect(card).toContainText("the tool's default");
  await ready(page, testInfo);
  await shot(page, testInfo, 'tool-connection-chosen');

  // kept: a reload shows the choice in the form and in words
  await page.reload();
  await ready(page, testInfo);
  const right = await card.locator('option', { hasText: 'right' }).getAttribute('value');
  expect(right).toMatch(/^\d+$/);
  await expect(card.getByLabel('Calls use')).toHaveValue(right);
  await expect(card.locator('strong')).toHaveText('right');
  // and the agent's next call goes with it: the vendor answers
  const ran = await agent.call('run_tool', input);
  expect(ran.isError).toBeFalsy();

  // back to the vendor's default
  await card.getByLabel('Calls use').selectOption({ label: "the vendor's default" });
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(card.locator('strong')).toHaveText('wrong');
  await expect(card.getByLabel('Calls use')).toHaveValue('');
  await agent.client.close();
});

test('publish a version with another input schema; a schema Graft cannot take is refused and nothing is saved (issue 28.10)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'schemas');
  await importVendor(page, testInfo, vendor);
  const tool = `${vendor}__create_widget`;
  const agent = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'schema-reader')));
  const promoted = await agent.call('promote', { vendor, name: 'create_widget' });
  expect(promoted.isError).toBeFalsy();

  const url = `/tools/${vendor}/create_widget`;
  await goto(page, testInfo, url);
  const publish = page.locator('#publish');
  await publish.locator('summary').click();
  const seen = Number(await publish.locator('input[name="seen"]').inputValue());
  expect(seen).toBe(1);
  // the same description, a schema with one more (optional) input
  const marker = `the widget's colour (${testInfo.project.name})`;
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      color: { type: 'string', enum: ['red', 'blue'], description: marker },
    },
    required: ['name'],
  };
  await publish.getByLabel('Input schema (JSON Schema)').fill(JSON.stringify(schema, null, 2));
  const changes = agent.changes;
  await publish.getByRole('button', { name: 'Publish version 2' }).click();
  await expect(page.locator('#publish').getByRole('status')).toHaveText('Published.');

  // the versions list: version 2 on top, the lines that changed from version 1
  const versions = page.locator('#versions > details');
  await expect(versions).toHaveCount(2);
  await expect(versions.first().locator(':scope > summary')).toContainText(/^Version 2 — POST \/widgets — by .*admin/);
  const diff = page.locator('#versions details.changes').first();
  await expect(diff.locator('summary')).toHaveText('Changes from version 1');
  await expect(diff.locator('.line.added', { hasText: marker })).toHaveCount(1);
  await expect(diff.locator('.line.added', { hasText: '"color"' })).toHaveCount(1);
  // Try it asks for the new input, with its choices
  await expect(page.locator('#try select[name="in.color"] option')).toHaveText(['—', 'red', 'blue']);
  await ready(page, testInfo);
  await shot(page, testInfo, 'tool-schema-published');

  // the agent holding it is told, and sees the new schema
  await agent.waitForChanges(changes + 1);
  const held = (await agent.client.listTools()).tools.find((t) => t.name === tool);
  expect(held.inputSchema.properties.color).toMatchObject({ type: 'string', enum: ['red', 'blue'] });

  // not JSON: refused at the field
  await goto(page, testInfo, url);
  await publish.locator('summary').click();
  await publish.getByLabel('Input schema (JSON Schema)').fill('{"type": "object", "properties": {');
  await publish.getByRole('button', { name: 'Publish version 3' }).click();
  const error = page.locator('#publish .field-error[data-field="input_schema"]');
  await expect(error).toContainText('not JSON');
  await expect(error).toBeVisible();
  await expect(page.locator('#publish p.error')).toHaveText('Nothing was saved: fix the field marked below.');
  await ready(page, testInfo);
  // JSON, but not an object schema: refused at the field, saying what it must be
  await publish.getByLabel('Input schema (JSON Schema)').fill('{"type": "array", "items": {"type": "string"}}');
  await publish.getByRole('button', { name: 'Publish version 3' }).click();
  await expect(error).toContainText('"type": "object" at its root');
  await expect(error).toBeVisible();
  await ready(page, testInfo);
  await shot(page, testInfo, 'tool-schema-refused');

  // nothing was saved: still two versions, and the agent still has version 2's schema
  await goto(page, testInfo, url);
  await expect(versions).toHaveCount(2);
  await expect(page.locator('#publish summary')).toHaveText('Edit version 2 as version 3…');
  const still = (await agent.client.listTools()).tools.find((t) => t.name === tool);
  expect(still.inputSchema.type).toBe('object');
  expect(still.inputSchema.properties.color).toMatchObject({ enum: ['red', 'blue'] });
  await agent.client.close();
});

test('the Approvals page filtered by vendor shows that vendor\'s requests only (issue 28.6)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const other = unique(testInfo, 'sieve');
  await importVendor(page, testInfo, other);
  const name = unique(testInfo, 'sorted');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  // a write of widgets and one of the other vendor, each waiting for a person
  for (const vendor of ['widgets', other]) {
    const asked = await agent.call('run_tool', { vendor, name: 'create_widget', input: { name: `w-${name}` } });
    expect(asked.structuredContent.error.code).toBe('approval_required');
  }
  await agent.client.close();
  const mine = (vendor) => page.locator(`tr[data-agent="${name}"][data-tool="${vendor}__create_widget"]`);
  const rows = page.locator('table.approvals tbody tr');

  await goto(page, testInfo, '/approvals');
  const filter = page.locator('form.approvals-filter');
  await filter.getByLabel('Agent').selectOption(name);
  await filter.getByLabel('Vendor').selectOption('widgets');
  await filter.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(new RegExp(`agent=${name}&vendor=widgets`));
  await ready(page, testInfo);
  await expect(rows).toHaveCount(1);
  await expect(mine('widgets')).toHaveAttribute('data-state', 'pending');
  await expect(mine(other)).toHaveCount(0);
  await expect(filter.getByLabel('Vendor')).toHaveValue('widgets');
  await expect(filter.getByRole('status')).toContainText('1 of');
  await shot(page, testInfo, 'approvals-vendor-widgets');
  await page.setViewportSize(PHONE);
  await expect(mine('widgets')).toBeVisible();
  await expectNoSideScroll(page);
  await shot(page, testInfo, 'approvals-vendor-widgets-375');
  await page.setViewportSize({ width: 1280, height: 900 });

  // the other vendor: its request shows, widgets' is hidden
  await filter.getByLabel('Vendor').selectOption(other);
  await filter.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(new RegExp(`vendor=${other}`));
  await ready(page, testInfo);
  await expect(rows).toHaveCount(1);
  await expect(mine(other)).toHaveAttribute('data-state', 'pending');
  await expect(mine('widgets')).toHaveCount(0);

  // a vendor with no approvals: nothing shows
  await goto(page, testInfo, `/approvals?agent=${name}&vendor=${name}-nowhere`);
  await expect(page.getByText('No approval matches these filters.')).toBeVisible();
  await expect(rows).toHaveCount(0);
  await expect(filter.getByRole('status')).toContainText('0 of');
  // the select says which vendor the page is filtered by, so Show again keeps it
  await expect(filter.getByLabel('Vendor')).toHaveValue(`${name}-nowhere`);
  await filter.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(new RegExp(`vendor=${name}-nowhere`));
});

test('on a phone (375 px): the Calls list, an agent\'s Access and Connect a client cards (issue 28)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'pocket');
  const token = await createAgent(page, testInfo, name);
  const agent = await connectAgent(token);
  const ran = await agent.call('run_tool', { vendor: 'widgets', name: 'list_widgets', input: {} });
  expect(ran.isError).toBeFalsy();
  await agent.client.close();
  await page.setViewportSize(PHONE);

  // the Calls list: this agent's call, each row a block with its cells labelled
  await goto(page, testInfo, '/calls');
  const call = page.locator('table.calls tbody tr', { hasText: name }).first();
  await expect(call).toBeVisible();
  await expect(call.locator('td[data-label="Tool"]')).toContainText('widgets__list_widgets');
  await expect(call).toHaveAttribute('data-outcome', 'ok');
  await expect(page.locator('table.calls thead')).toBeHidden();
  await expectNoSideScroll(page);
  await shot(page, testInfo, 'calls-375');

  // the agent page's Access card, its second step open
  await goto(page, testInfo, `/agents/${name}`);
  const access = page.locator('#access');
  await expect(access.getByRole('heading', { name: 'Access' })).toBeVisible();
  await access.locator('summary', { hasText: 'Disable agent' }).click();
  await expect(access.getByRole('button', { name: 'Disable the agent now' })).toBeVisible();
  await expect(access.locator('summary', { hasText: 'Remove agent' })).toBeVisible();
  await access.scrollIntoViewIfNeeded();
  await expectNoSideScroll(page);
  await shot(page, testInfo, 'agent-access-375');

  // Connect a client: every client's configuration, the token a placeholder
  const connect = page.locator('#connect');
  await connect.locator('summary').click();
  await expect(connect.locator('pre[data-client]')).toHaveCount(7);
  await expect(connect.locator('pre[data-client="Hermes"]')).toBeVisible();
  await expect(connect.locator('pre[data-shell]').first()).toContainText('YOUR_AGENT_TOKEN');
  await expect(connect).not.toContainText(token);
  if (testInfo.project.name === 'hydrated') {
    // each block copies as it does on the token page (they hold no token)
    await expect(connect.getByRole('button', { name: 'Copy the configuration' })).toHaveCount(7);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    const codex = connect.locator('.copyable', { has: page.locator('pre[data-client="Codex CLI"]') });
    await codex.getByRole('button', { name: 'Copy the configuration' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('bearer_token_env_var = "GRAFT_TOKEN"');
  } else {
    await expect(connect.getByRole('button', { name: /^Copy / })).toHaveCount(0);
  }
  await connect.scrollIntoViewIfNeeded();
  await expectNoSideScroll(page);
  await shot(page, testInfo, 'agent-connect-375');
});

test('on a phone (375 px): a removed vendor\'s Restore step (issue 28.11)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'shelved');
  await importVendor(page, testInfo, vendor);
  await goto(page, testInfo, `/vendors/${vendor}`);
  const remove = page.locator('#remove form');
  await remove.getByRole('checkbox').check();
  await remove.getByRole('button', { name: 'Remove the vendor' }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors\\?removed=${vendor}$`));

  await page.setViewportSize(PHONE);
  await goto(page, testInfo, `/vendors/${vendor}`);
  await expect(page.getByRole('note')).toContainText('Restoring it (below)');
  await page.locator('summary', { hasText: 'Restore the vendor' }).click();
  await expect(page.locator('details.confirm .confirm-body')).toContainText('Brings it back as it was when removed');
  await expect(page.getByRole('button', { name: 'Restore', exact: true })).toBeVisible();
  await expectNoSideScroll(page);
  await shot(page, testInfo, 'vendor-restore-375');
});
