// Who did what (issue 28.8), hydrated and without JavaScript: a person's actions in the
// console appear on the Audit page under their name, the filters narrow it, and the CSV
// link downloads what the filters show.
import { test, expect, unique, shot, goto, signIn, createAgent } from './fixtures.mjs';

test('the Audit page names the person, filters by action and downloads CSV (issue 28.8)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'audited');
  await createAgent(page, testInfo, name);

  await goto(page, testInfo, '/audit');
  const filter = page.locator('form.audit-filter');
  await filter.getByLabel('Action').selectOption('agent.add');
  await filter.getByLabel('Target contains').fill(name);
  await filter.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(/action=agent\.add/);
  const rows = page.locator('table.audit tbody tr');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('admin');
  await expect(rows.first()).toContainText('added an agent');
  await expect(rows.first()).toContainText(name);
  await shot(page, testInfo, 'audit-filtered');

  // the CSV link carries the filters; what it downloads is what the table shows
  const href = await filter.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
  expect(href).toContain('action=agent.add');
  const csv = await page.request.get(href);
  expect(csv.status()).toBe(200);
  const lines = (await csv.text()).split('\r\n').filter((l) => l);
  expect(lines[0]).toBe('time,person,action,target,detail');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain(`,admin,agent.add,${name}`);

  // every sign-in is there too, and nothing matches a person who never acted
  await goto(page, testInfo, '/audit?action=session.sign_in');
  await expect(rows.first()).toContainText('signed in');
  await goto(page, testInfo, `/audit?target=${name}-never`);
  await expect(page.getByRole('status')).toContainText('No action matches.');

  await goto(page, testInfo, '/audit');
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, testInfo, 'audit-375');
});
