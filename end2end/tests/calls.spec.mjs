// The calls log in the console (issue 28.9), hydrated and without JavaScript: an agent's
// call (the TypeScript SDK) is listed, the filters narrow the list, and its detail shows
// the request as sent (the credential redacted) and the vendor's answer.
import { test, expect, unique, shot, goto, signIn, createAgent, connectAgent } from './fixtures.mjs';

test('the calls log filters every agent\'s calls and shows what one sent and got (issue 28.9)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'caller');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  const ran = await agent.call('run_tool', { vendor: 'widgets', name: 'list_widgets', input: {} });
  expect(ran.isError).toBeFalsy();

  await goto(page, testInfo, '/calls');
  const filter = page.locator('form.calls-filter');
  await filter.getByLabel('Agent').selectOption(name);
  await filter.getByLabel('Outcome').selectOption('ok');
  await filter.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(new RegExp(`agent=${name}`));
  const rows = page.locator('table.calls tbody tr');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('widgets__list_widgets');
  await shot(page, testInfo, 'calls-filtered');

  await rows.first().locator('a.call-link').click();
  await expect(page).toHaveURL(/\/calls\/\d+$/);
  await expect(page.getByRole('heading', { name: /^Call \d+$/ })).toBeVisible();
  const sent = page.getByLabel('Request sent');
  await expect(sent).toContainText('"method": "GET"');
  await expect(sent).toContainText('/widgets');
  const answer = page.getByLabel('Answer');
  await expect(answer).toContainText('"status": 200');
  // the connection's secret never reaches the page
  expect(process.env.VENDOR_SECRET).toBeTruthy();
  expect(await page.content()).not.toContain(process.env.VENDOR_SECRET);
  await expect(sent).toContainText('<redacted>');
  await shot(page, testInfo, 'call-detail');
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, testInfo, 'call-detail-375');
  await agent.client.close();
});
