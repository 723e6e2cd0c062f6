// Live pages and the team's webhook (issue 28.3). Hydrated, an open page follows what
// agents do without a reload: the nav's approvals badge within 2 s of an agent's
// request, the Approvals and Calls pages' rows; without JavaScript a reload shows the
// same. The Settings page sets the webhook, shows its URL's token and its secret on request and sends a test
// notice, hydrated and as plain form posts; desktop, 375 px and dark mode.
import { test, expect, unique, shot, goto, ready, signIn, createAgent, connectAgent } from './fixtures.mjs';

/** The nav badge's count (0 when it is not shown). */
async function badge(page) {
  const count = page.locator('header.top a[href="/approvals"] .count');
  return (await count.count()) ? Number(await count.innerText()) : 0;
}

test('the approvals badge, Approvals and Calls follow an agent without a reload (issue 28.3)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'live');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  await goto(page, testInfo, '/approvals');
  const before = await badge(page);
  const row = page.locator(`tr[data-agent="${name}"][data-tool="widgets__create_widget"]`);
  await expect(row).toHaveCount(0);
  // a mark that a reload would wipe
  await page.evaluate(() => { window.__stayed = true; });
  // hydrated: the page's stream is open before the agent acts
  if (testInfo.project.name === 'hydrated') await page.locator('body[data-live="ready"]').waitFor();

  const asked = await agent.call('run_tool', { vendor: 'widgets', name: 'create_widget', input: { name: 'live' } });
  expect(asked.structuredContent.error.code).toBe('approval_required');
  if (testInfo.project.name === 'hydrated') {
    await expect(page.locator('header.top a[href="/approvals"] .count')).toHaveText(String(before + 1), { timeout: 2_000 });
    await expect(row).toHaveAttribute('data-state', 'pending', { timeout: 2_000 });
    expect(await page.evaluate(() => window.__stayed)).toBe(true);
    await shot(page, testInfo, 'approvals-live');
  } else {
    // without JavaScript nothing moves until the page is loaded again, which shows it
    await page.waitForTimeout(500);
    await expect(row).toHaveCount(0);
    await page.reload();
    await expect(row).toHaveAttribute('data-state', 'pending');
    expect(await badge(page)).toBe(before + 1);
  }

  // the Calls page, open, shows the agent's next call as it is logged
  await goto(page, testInfo, `/calls?agent=${name}`);
  const calls = page.locator('table tbody tr');
  const had = await calls.count();
  await page.evaluate(() => { window.__stayed = true; });
  await agent.call('run_tool', { vendor: 'widgets', name: 'create_widget', input: { name: 'again' } });
  if (testInfo.project.name === 'hydrated') {
    await expect(calls).toHaveCount(had + 1, { timeout: 2_000 });
    expect(await page.evaluate(() => window.__stayed)).toBe(true);
  } else {
    await page.reload();
    await expect(calls).toHaveCount(had + 1);
  }

  // a form being filled in holds the page still: what a person types is never lost
  if (testInfo.project.name === 'hydrated') {
    const other = await connectAgent(await createAgent(page, testInfo, unique(testInfo, 'live-2')));
    await goto(page, testInfo, '/approvals');
    const deny = page.locator(`tr[data-agent="${name}"][data-tool="widgets__create_widget"]`);
    await deny.locator('summary', { hasText: 'Deny' }).click();
    const reason = deny.getByLabel('Reason (optional; the agent is told)');
    await reason.fill('typed while another agent asks');
    const badgeBefore = await badge(page);
    await other.call('run_tool', { vendor: 'widgets', name: 'create_widget', input: { name: 'x' } });
    // the badge follows at once; the row being edited keeps its text
    await expect(page.locator('header.top a[href="/approvals"] .count')).toHaveText(String(badgeBefore + 1), { timeout: 2_000 });
    await page.waitForTimeout(1_500);
    await expect(reason).toHaveValue('typed while another agent asks');
  }
});

test('the Settings page sets the webhook, shows its whole URL and secret on request and sends a test notice (issue 28.3)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  await goto(page, testInfo, '/settings');
  await expect(page.locator('header.top a[href="/settings"]')).toHaveAttribute('aria-current', 'page');
  const form = page.locator('#webhook form').first();
  // a URL Graft refuses is said at its field
  await form.getByLabel('Webhook URL').fill('http://');
  await form.getByLabel('Webhook URL').evaluate((el) => { el.type = 'text'; });
  await form.getByRole('button', { name: 'Save webhook' }).click();
  await expect(page.locator('[data-field="url"]')).toBeVisible();
  await ready(page, testInfo);

  // nothing listens on port 9: the test notice says why it was not delivered
  // shaped as a Slack incoming webhook, whose path is a token: shown cut until asked
  const token = unique(testInfo, 'tok');
  const url = `http://127.0.0.1:9/services/T0AAA/B0BBB/${token}`;
  const form2 = page.locator('#webhook form').first();
  await form2.getByLabel('Webhook URL').fill(url);
  await form2.getByLabel('Format').selectOption('slack');
  await form2.getByLabel(/Failed calls of one vendor/).fill('3');
  await form2.getByRole('button', { name: 'Save webhook' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Webhook saved.' })).toBeVisible();
  await ready(page, testInfo);
  const facts = page.locator('#webhook dl.facts');
  await expect(page.locator('#webhook-url')).toHaveText('http://127.0.0.1:9/…');
  await expect(page.locator('#webhook')).not.toContainText(token);
  await expect(facts).toContainText('slack');
  await expect(facts).toContainText('at 3 failed calls');
  await expect(page.locator('#webhook-secret')).toHaveCount(0);
  await page.getByRole('link', { name: 'Show the whole URL and the secret' }).click();
  await expect(page.locator('#webhook-secret')).toHaveText(/^whsec_[A-Za-z0-9+/=]{40,}$/);
  await expect(page.locator('#webhook-url')).toHaveText(url);
  await ready(page, testInfo);

  await page.getByRole('button', { name: 'Send a test notice' }).click();
  await expect(page.locator('#last-delivery')).toContainText('webhook.test not delivered: the receiver could not be reached');
  await shot(page, testInfo, 'settings');
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, testInfo, 'settings-375');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 1280, height: 900 });
  // dark mode follows the system: dark page, light text, dark fields (their text
  // readable on them)
  const colors = await page.evaluate(() => {
    const of = (el) => getComputedStyle(el);
    const input = document.querySelector('input[name="url"]');
    return { bg: of(document.body).backgroundColor, fg: of(document.body).color,
      inputBg: of(input).backgroundColor, inputFg: of(input).color };
  });
  expect(colors).toEqual({ bg: 'rgb(18, 21, 28)', fg: 'rgb(228, 232, 240)',
    inputBg: 'rgb(18, 21, 28)', inputFg: 'rgb(228, 232, 240)' });
  await shot(page, testInfo, 'settings-dark');
  await goto(page, testInfo, '/approvals');
  await shot(page, testInfo, 'approvals-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // removed behind a second step
  await goto(page, testInfo, '/settings');
  await page.locator('summary', { hasText: 'Remove the webhook' }).click();
  await page.getByRole('button', { name: 'Remove the webhook' }).click();
  await expect(page.locator('#webhook dl.facts')).toHaveCount(0);
});

test('an open agent page and the home page follow what the agent promotes and demotes (issue 28.3)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const name = unique(testInfo, 'live-set');
  const agent = await connectAgent(await createAgent(page, testInfo, name));
  const hydrated = testInfo.project.name === 'hydrated';
  const waitLive = async () => { if (hydrated) await page.locator('body[data-live="ready"]').waitFor(); };

  // the agent page: a tool the agent promotes appears in its working set
  await goto(page, testInfo, `/agents/${name}`);
  const row = page.locator('table.working-set tr[data-tool="widgets__list_widgets"]');
  await expect(row).toHaveCount(0);
  await page.evaluate(() => { window.__stayed = true; });
  await waitLive();
  await agent.call('promote', { vendor: 'widgets', name: 'list_widgets' });
  if (hydrated) {
    await expect(row).toHaveCount(1, { timeout: 2_000 });
    expect(await page.evaluate(() => window.__stayed)).toBe(true);
  } else {
    await page.waitForTimeout(500);
    await expect(row).toHaveCount(0);
    await page.reload();
    await expect(row).toHaveCount(1);
  }

  // home: the agent's working-set size follows a demotion
  await goto(page, testInfo, '/');
  const size = page.locator(`tr[data-agent="${name}"] td[data-label="Working set"]`);
  await expect(size).toHaveText(/^\d+ of \d+$/);
  const had = Number((await size.innerText()).split(' ')[0]);
  expect(had).toBeGreaterThanOrEqual(1);
  await page.evaluate(() => { window.__stayed = true; });
  await waitLive();
  await agent.call('demote', { vendor: 'widgets', name: 'list_widgets' });
  const fewer = new RegExp(`^${had - 1} of `);
  if (hydrated) {
    await expect(size).toHaveText(fewer, { timeout: 2_000 });
    expect(await page.evaluate(() => window.__stayed)).toBe(true);
  } else {
    await page.reload();
    await expect(size).toHaveText(fewer);
  }
  await agent.client.close();
});
