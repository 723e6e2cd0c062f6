// The tool page a person edits (issue 28.10), hydrated and without JavaScript: a note, a
// new version published with another description (its Markdown rendered), the changes
// from the version before, and an agent (TypeScript SDK) reading the new description.
import { test, expect, unique, shot, goto, ready, signIn, createAgent, connectAgent } from './fixtures.mjs';

test('a person notes, edits and publishes a tool; the page shows what changed (issue 28.10)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const agent = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'page-reader')));
  const url = '/tools/widgets/get_catalog';
  await goto(page, testInfo, url);
  await ready(page, testInfo);

  // a note, kept under the person's name
  const note = `use the staging catalog (${testInfo.project.name})`;
  const notes = page.locator('#notes');
  await notes.getByLabel('Add a note').fill(note);
  await notes.getByRole('button', { name: 'Add note' }).click();
  await expect(notes.locator('li', { hasText: note })).toBeVisible();
  await expect(notes.getByLabel('Add a note')).toHaveValue('');

  // a new version with another description, in Markdown
  const publish = page.locator('#publish');
  await publish.locator('summary').click();
  const seen = Number(await publish.locator('input[name="seen"]').inputValue());
  const marker = `cached-${testInfo.project.name}`;
  await publish.getByLabel('Description (Markdown)').fill(`Get the whole widget catalog.\n\n**Cached** hourly: ${marker}.`);
  await publish.getByRole('button', { name: `Publish version ${seen + 1}` }).click();
  await expect(page.locator('.md.description strong')).toHaveText('Cached');
  await expect(page.locator('.md.description')).toContainText(marker);
  const changes = page.locator('#versions details.changes').first();
  await expect(changes.locator('summary')).toHaveText(`Changes from version ${seen}`);
  await expect(changes.locator('.line.added', { hasText: marker })).toHaveCount(1);
  await shot(page, testInfo, 'tool-published');

  // the agent sees the new description in tools/list once it holds the tool
  await agent.call('promote', { vendor: 'widgets', name: 'get_catalog' });
  const { tools } = await agent.client.listTools();
  const held = tools.find((t) => t.name === 'widgets__get_catalog');
  expect(held.description).toContain(marker);

  // nothing changed is refused at the field, and nothing is published
  await goto(page, testInfo, url);
  await ready(page, testInfo);
  await page.locator('#publish summary').click();
  await page.locator('#publish').getByRole('button', { name: `Publish version ${seen + 2}` }).click();
  await expect(page.locator('#publish .field-error[data-field="description"]')).toContainText('nothing changed');
  await expect(page.locator('#publish .field-error[data-field="description"]')).toBeVisible();
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, testInfo, 'tool-page-375');
  await agent.client.close();
});

test('a person tries a tool: the request a call would send, a refusal, then sends it (issue 28.10)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  await goto(page, testInfo, '/tools/widgets/create_widget');
  await ready(page, testInfo);
  const tryIt = page.locator('#try');
  await tryIt.getByRole('button', { name: 'Dry run' }).click();
  await expect(tryIt.locator('.try-result.refused')).toContainText('invalid_input');
  await tryIt.getByLabel('name (required)').fill(`bolt-${testInfo.project.name}`);
  await tryIt.getByRole('button', { name: 'Dry run' }).click();
  const result = tryIt.locator('.try-result.ok pre');
  // posted: what was typed stays out of the address, and the form holds it again
  await expect(page).toHaveURL(/[?&]tried=/);
  expect(page.url()).not.toContain('bolt-');
  await expect(tryIt.getByLabel('name (required)')).toHaveValue(`bolt-${testInfo.project.name}`);
  await expect(result).toContainText('"method": "POST"');
  await expect(result).toContainText(`bolt-${testInfo.project.name}`);
  await expect(result).toContainText('<redacted>');
  expect(await page.content()).not.toContain(process.env.VENDOR_SECRET);
  await shot(page, testInfo, 'tool-try');

  // then sent for real: a write is confirmed first; the vendor's answer is shown
  await tryIt.getByRole('button', { name: 'Send to the vendor' }).click();
  await expect(page.locator('#try .error, #try [role="alert"]').first()).toContainText('Send this write');
  await ready(page, testInfo);
  await tryIt.getByLabel(/Send this write/).check();
  await tryIt.getByRole('button', { name: 'Send to the vendor' }).click();
  await expect(page).toHaveURL(/[?&]sent=/);
  await expect(page.locator('#try .try-result h3')).toHaveText('What the vendor answered');
  expect(page.url()).not.toContain('bolt-');
  // the form shows what was sent
  await expect(tryIt.getByLabel('name (required)')).toHaveValue(`bolt-${testInfo.project.name}`);
  expect(await page.content()).not.toContain(process.env.VENDOR_SECRET);
  await shot(page, testInfo, 'tool-sent');
});
