// Imports in the console (issue 28.11), hydrated and without JavaScript: the import's
// progress while it runs, a preview of a re-upload applied from the page, the rename
// list kept in the import history, and Restore of a removed vendor as it was.
import { test, expect, unique, shot, goto, ready, signIn } from './fixtures.mjs';
import path from 'node:path';

const V1 = `openapi: 3.0.3
info: {title: Shop, version: "1"}
servers: [{url: "https://shop.example"}]
paths:
  /items:
    post: {operationId: createItem, responses: {"200": {description: ok}}}
  /items/{id}:
    delete:
      operationId: deleteItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`;

// the write moved, the delete gone, two lists whose names collide (one is renamed)
const V2 = `openapi: 3.0.3
info: {title: Shop, version: "2"}
servers: [{url: "https://shop.example"}]
paths:
  /v2/items:
    post: {operationId: createItem, responses: {"200": {description: ok}}}
    get: {operationId: listItems, responses: {"200": {description: ok}}}
  /v2/items/all:
    get: {operationId: list-items, responses: {"200": {description: ok}}}
`;

async function upload(page, vendor, text, button) {
  const form = page.locator('form[action="/vendors/import"]');
  await form.getByLabel('Vendor slug').fill(vendor);
  await form.getByLabel('Document').setInputFiles({
    name: `${vendor}.yaml`, mimeType: 'application/yaml', buffer: Buffer.from(text),
  });
  await form.getByRole('button', { name: button, exact: true }).click();
}

test('a re-upload is previewed, applied, and its renames stay in the history', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'shop');
  await goto(page, testInfo, '/vendors');
  await upload(page, vendor, V1, 'Import');
  await expect(page.locator('#import-summary')).toContainText(`Vendor ${vendor}, 2 operations: 2 new tools.`);
  await ready(page, testInfo);

  // the preview: what would change, and nothing changed yet
  await upload(page, vendor, V2, 'Preview');
  await expect(page).toHaveURL(/\/vendors\?preview=/);
  const card = page.locator('#import-summary');
  await expect(card).toHaveAttribute('data-preview', 'true');
  await expect(card.getByRole('heading')).toHaveText('Preview: nothing is changed until you apply it');
  await expect(card).toContainText('2 new tools');
  await expect(card).toContainText('1 updated');
  await expect(card).toContainText('1 retired');
  await expect(card.locator('details', { hasText: 'Retired' })).toContainText('delete_item');
  await expect(card.locator('details', { hasText: 'Updated' })).toContainText('path /items → /v2/items');
  await ready(page, testInfo);
  await shot(page, testInfo, 'import-preview');
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, testInfo, 'import-preview-375');
  await page.setViewportSize({ width: 1280, height: 800 });
  // the toolbox is as it was
  await goto(page, testInfo, `/tools?vendor=${vendor}`);
  await expect(page.getByText('delete_item').first()).toBeVisible();
  await expect(page.getByText('list_items')).toHaveCount(0);
  await page.goBack();
  await ready(page, testInfo);

  // applied from the page
  await page.getByRole('button', { name: 'Apply this import' }).click();
  await expect(page).toHaveURL(/\/vendors\?import=/);
  await expect(page.locator('#import-summary').getByRole('heading')).toHaveText('Import done');
  await expect(page.locator('#import-summary')).toContainText('1 retired');
  await expect(page.locator('#apply-import')).toHaveCount(0);
  await ready(page, testInfo);
  // the history keeps the rename list
  const row = page.locator(`#imports tr[data-vendor="${vendor}"]`).first();
  await row.getByText('Which tools').click();
  await expect(row).toContainText(/named list_items_[0-9a-f]{6}: operation list/);
  await shot(page, testInfo, 'import-history-renames');
});

test('a removed vendor is restored as it was', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const vendor = unique(testInfo, 'depot');
  await goto(page, testInfo, '/vendors');
  await upload(page, vendor, V1, 'Import');
  await expect(page.locator('#import-summary')).toContainText('2 new tools');
  await goto(page, testInfo, `/vendors/${vendor}`);
  const remove = page.locator('#remove form');
  await remove.getByRole('checkbox').check();
  await remove.getByRole('button', { name: 'Remove the vendor' }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors\\?removed=${vendor}$`));
  await goto(page, testInfo, `/vendors/${vendor}`);
  await page.getByText('Restore the vendor').click();
  await shot(page, testInfo, 'vendor-restore');
  await page.getByRole('button', { name: 'Restore', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors\\?back=${vendor}$`));
  await expect(page.getByRole('status').filter({ hasText: `Vendor ${vendor} was removed before and is back` })).toBeVisible();
  await ready(page, testInfo);
  await expect(page.locator(`tr[data-vendor="${vendor}"] a[title]`)).toBeVisible();
  await shot(page, testInfo, 'vendor-restored');
});

test('a large import shows its progress while it runs', async ({ page }, testInfo) => {
  test.skip(testInfo.project.name !== 'hydrated', 'the progress needs JavaScript; without it the browser waits for the summary');
  await signIn(page, testInfo);
  await goto(page, testInfo, '/vendors');
  // every text the progress line shows, kept across the page change that follows
  const said = [];
  await page.exposeFunction('noteUpload', (t) => said.push(t));
  await page.evaluate(() => {
    new MutationObserver(() => {
      const p = document.querySelector('p.upload');
      if (p) window.noteUpload(p.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  const form = page.locator('form[action="/vendors/import"]');
  await form.getByLabel('Vendor slug').fill(unique(testInfo, 'calls'));
  await form.getByLabel('Document').setInputFiles(path.join(process.env.E2E_SPECS_DIR, 'twilio_api_v2010.json'));
  await form.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.locator('#import-summary')).toContainText(/\d+ new tools/, { timeout: 60_000 });
  expect(said.some((t) => /Importing… \d+ of \d+ operations/.test(t)), said.join(' | ')).toBe(true);
});
