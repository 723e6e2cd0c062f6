// Keeping a vendor's credentials in the console (issue 28.2), hydrated and without
// JavaScript, against the real vendor (vendor.mjs refuses any bearer but its own): a
// wrong key fails its test, a second connection asks which one calls use, the new one
// becomes the default and passes its test, a secret replaced in place passes too.
import fs from 'node:fs';
import { test, expect, unique, shot, goto, ready, signIn } from './fixtures.mjs';

test('a team rotates a vendor key: test, a second connection as the default, a secret replaced (issue 28.2)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'keys');
  await goto(page, testInfo, '/vendors');
  const upload = page.locator('form[action="/vendors/import"]');
  await upload.getByLabel('Vendor slug').fill(vendor);
  await upload.getByLabel('Document').setInputFiles({
    name: 'keys.yaml', mimeType: 'application/yaml', buffer: fs.readFileSync(process.env.E2E_SPEC),
  });
  await upload.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-summary')).toContainText(`Vendor ${vendor}`);
  await goto(page, testInfo, `/vendors/${vendor}`);
  const add = () => page.locator('#connections form[action="/api/add_connection"]');
  const row = (label) => page.locator(`tr[data-connection="${label}"]`);

  // the first connection, with a key the vendor refuses: its test says so
  await add().getByLabel('Label').fill('first');
  await add().getByLabel('Secret (write-only)').fill('not-the-right-key-1');
  await add().getByRole('button', { name: 'Add connection' }).click();
  await expect(row('first')).toContainText('active');
  await ready(page, testInfo);
  await row('first').getByRole('button', { name: 'Test first' }).click();
  await expect(row('first')).toContainText('Test failed');
  await expect(row('first')).toContainText('refused the credential');

  // a second one asks which connection calls use
  await ready(page, testInfo);
  await add().getByLabel('Label').fill('second');
  await add().getByLabel('Secret (write-only)').fill(process.env.VENDOR_SECRET);
  await expect(add().locator('fieldset.choice')).toContainText('has a connection already (first)');
  await add().getByLabel(/the new connection/).check();
  await add().getByRole('button', { name: 'Add connection' }).click();
  await expect(row('second').locator('.badge')).toHaveText('default');
  await ready(page, testInfo);
  await row('second').getByRole('button', { name: 'Test second' }).click();
  await expect(row('second')).toContainText('Test passed');
  await expect(row('second')).toContainText('the credential works');
  expect(await page.content()).not.toContain(process.env.VENDOR_SECRET);

  // the first one's secret replaced in place, behind a second step: its test passes
  await ready(page, testInfo);
  await row('first').locator('summary', { hasText: 'Replace secret' }).click();
  await row('first').getByLabel('New secret (write-only)').fill(process.env.VENDOR_SECRET);
  await row('first').getByRole('button', { name: 'Replace the secret of first' }).click();
  await expect(row('first')).toContainText('secret replaced');
  // the new secret is not left in the page
  await expect(row('first').getByLabel('New secret (write-only)')).toHaveValue('');
  await ready(page, testInfo);
  await row('first').getByRole('button', { name: 'Test first' }).click();
  await expect(row('first')).toContainText('Test passed');
  // it becomes the default again
  await ready(page, testInfo);
  await row('first').getByRole('button', { name: 'Make first the default' }).click();
  await expect(row('first').locator('.badge')).toHaveText('default');
  await expect(row('second').locator('.badge')).toHaveCount(0);
  await shot(page, testInfo, 'connections');
  await page.setViewportSize({ width: 375, height: 800 });
  await goto(page, testInfo, `/vendors/${vendor}#connections`);
  await shot(page, testInfo, 'connections-375');
});
