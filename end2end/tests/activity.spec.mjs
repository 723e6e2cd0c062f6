// The Activity page and an agent's calls per day (issue 30.4), hydrated and without
// JavaScript: an agent calls over MCP (TypeScript SDK) against the real vendor, then the
// page's charts, latency table and approvals count show it.
import { test, expect, unique, shot, goto, signIn, createAgent, connectAgent } from './fixtures.mjs';

test('the Activity page shows what the agents did: calls by outcome, latency by vendor, approvals, changes (issue 30.4)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'active');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  await agent.call('promote', { vendor: 'widgets', name: 'list_widgets' });
  await agent.call('promote', { vendor: 'widgets', name: 'create_widget' });
  for (let i = 0; i < 2; i++) {
    expect((await agent.call('widgets__list_widgets', {})).isError).toBeFalsy();
  }
  // a write waits for a person
  const write = await agent.call('widgets__create_widget', { name: 'w' });
  expect(write.structuredContent.error.code).toBe('approval_required');
  await agent.client.close();

  await goto(page, testInfo, '/');
  await page.getByRole('link', { name: 'Activity' }).click();
  await expect(page).toHaveURL(/\/activity$/);
  await expect(page.getByRole('link', { name: 'Activity' })).toHaveAttribute('aria-current', 'page');
  await expect(page.getByRole('link', { name: 'Last 24 hours' })).toHaveAttribute('aria-current', 'page');
  const calls = page.locator('#calls-chart').getByRole('img', { name: /^calls from .* UTC to now: / });
  await expect(calls).toBeVisible();
  await expect(page.locator('#calls-chart .chart-unit')).toHaveText(/calls per minute/);
  // other tests of this run called too: at least this agent's calls are counted
  const label = await calls.getAttribute('aria-label');
  const ok = Number(/(\d[\d,]*) ok/.exec(label)[1].replace(/,/g, ''));
  const waits = Number(/(\d[\d,]*) waits for approval/.exec(label)[1].replace(/,/g, ''));
  expect(ok).toBeGreaterThanOrEqual(2);
  expect(waits).toBeGreaterThanOrEqual(1);
  await expect(page.locator('#calls-chart .legend')).toContainText('ok:');
  const vendor = page.locator('#latency tr[data-vendor="widgets"]');
  await expect(vendor).toBeVisible();
  await expect(vendor.locator('td').nth(3)).toHaveText(/\d+ ms|\d+(\.\d)? s/);
  await expect(page.locator('#approvals-waiting')).toContainText(/approvals? waits?/);
  await expect(page.locator('#changes-chart').getByRole('img', { name: /promoted/ })).toBeVisible();
  await shot(page, testInfo, 'activity-24h');

  await page.getByRole('link', { name: 'Last 30 days' }).click();
  await expect(page).toHaveURL(/range=30d/);
  await expect(page.getByRole('link', { name: 'Last 30 days' })).toHaveAttribute('aria-current', 'page');
  await expect(page.locator('#calls-chart').getByRole('img', { name: /^calls from \d{4}-\d\d-\d\d to now: / })).toBeVisible();
  await expect(page.locator('#calls-chart .chart-unit')).toHaveText('calls per day');
  // the numbers as a table, for a keyboard or a screen reader: today's row holds the calls
  await page.locator('#calls-chart').getByText('The calls as a table').click();
  const today = new Date().toISOString().slice(0, 10);
  await expect(page.locator('#calls-chart table').getByRole('rowheader', { name: today })).toBeVisible();
  await shot(page, testInfo, 'activity-30d');

  // the agent's own page: exactly its three calls today
  await goto(page, testInfo, `/agents/${name}`);
  await expect(page.locator('#calls-per-day').getByRole('img')).toHaveAttribute('aria-label', /: 3 calls$/);
  await page.locator('#calls-per-day').scrollIntoViewIfNeeded();
  await shot(page, testInfo, 'agent-calls-per-day');

  // a phone
  await page.setViewportSize({ width: 375, height: 800 });
  await goto(page, testInfo, '/activity');
  await expect(page.locator('#calls-chart').getByRole('img')).toBeVisible();
  await shot(page, testInfo, 'activity-375');
});
