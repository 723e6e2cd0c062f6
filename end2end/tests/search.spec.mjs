// The console's search pages (issue 28.12) on the Toolbox and on an agent's page, with
// and without JavaScript, and Try it's warning on a vendor with no connection: a vendor
// of 60 tools uploaded from the Vendors page, one word in every summary.
import { test, expect, unique, shot, goto, ready, signIn, createAgent } from './fixtures.mjs';

/** An OpenAPI document of `n` operations, each summary holding `word`. */
function document(word, n) {
  const paths = Array.from({ length: n }, (_, i) =>
    `  /parts/${i}:\n    get: {operationId: readPart${i}, summary: "Read ${word} number ${i}", responses: {"200": {description: ok}}}\n`);
  return `openapi: 3.0.3\ninfo: {title: Parts, version: "1"}\nservers: [{url: "https://parts.example"}]\npaths:\n${paths.join('')}`;
}

test('a search of 60 matches pages on the Toolbox and on an agent page; Try it warns that a vendor has no connection', async ({ page }, testInfo) => {
  // one word per project: the two run side by side on one server
  const word = testInfo.project.name === 'hydrated' ? 'sprocket' : 'flange';
  const vendor = unique(testInfo, 'parts');
  await signIn(page, testInfo);
  await goto(page, testInfo, '/vendors');
  const form = page.locator('form[action="/vendors/import"]');
  await form.getByLabel('Vendor slug').fill(vendor);
  await form.getByLabel('Document').setInputFiles({
    name: `${vendor}.yaml`, mimeType: 'application/yaml', buffer: Buffer.from(document(word, 60)),
  });
  await form.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.locator('#import-summary')).toContainText('60 new tools', { timeout: 60_000 });

  // the Toolbox: 50 on the first page, the other 10 on the next, and back
  await goto(page, testInfo, `/tools?q=${word}&vendor=${vendor}`);
  await expect(page.getByText('Matches 1–50 of 60, best first')).toBeVisible();
  await expect(page.locator('tr[data-tool]')).toHaveCount(50);
  const pager = page.getByRole('navigation', { name: 'Search result pages' });
  await expect(pager).toContainText('Page 1 of 2');
  await pager.getByRole('link', { name: 'Next' }).click();
  await expect(page).toHaveURL(/[?&]hp=2/);
  await expect(page.getByText('Matches 51–60 of 60, best first')).toBeVisible();
  await expect(page.locator('tr[data-tool]')).toHaveCount(10);
  await shot(page, testInfo, 'toolbox-search-page-2');
  await pager.getByRole('link', { name: 'Previous' }).click();
  await expect(page.getByText('Matches 1–50 of 60, best first')).toBeVisible();

  // Try it on one of its tools: the vendor has no connection, which it says, and where to add one
  await page.locator('tr[data-tool] a').first().click();
  await expect(page).toHaveURL(new RegExp(`/tools/${vendor}/`));
  await ready(page, testInfo);
  const warning = page.locator('#try .no-connection');
  await expect(warning).toContainText(`${vendor} has no connection: a send goes without a credential`);
  await warning.getByRole('link', { name: 'Add a connection' }).click();
  await expect(page).toHaveURL(new RegExp(`/vendors/${vendor}#connections$`));

  // an agent's page: the same search, its pages land back at the promote card
  const agent = unique(testInfo, 'pager');
  await createAgent(page, testInfo, agent);
  await goto(page, testInfo, `/agents/${agent}`);
  const promote = page.locator('#promote');
  await promote.getByLabel('Search the toolbox').fill(word);
  await promote.getByLabel('Search the toolbox').press('Enter');
  await expect(promote.getByText('Matches 1–50 of 60, best first')).toBeVisible();
  await promote.getByRole('navigation', { name: 'Search result pages' }).getByRole('link', { name: 'Next' }).click();
  await expect(page).toHaveURL(new RegExp(`/agents/${agent}\\?q=${word}&hp=2#promote$`));
  await expect(promote.getByText('Matches 51–60 of 60, best first')).toBeVisible();
  await expect(promote.locator('ul.hits > li')).toHaveCount(10);
  await shot(page, testInfo, 'agent-search-page-2');
});
