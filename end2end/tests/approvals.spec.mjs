// Approvals a team decides (issue 28.6), hydrated and without JavaScript: the filters,
// a denial with a reason the agent's next call receives, each row's decisions, and one
// approval for every agent a tool waits for. Agents on the TypeScript SDK.
import { test, expect, unique, shot, goto, ready, signIn, createAgent, connectAgent } from './fixtures.mjs';

const TOOL = 'widgets__create_widget';

test('deny with a reason the agent is told, filter, and approve a tool for every waiting agent (issue 28.6)', async ({ page }, testInfo) => {
  await signIn(page, testInfo);
  const names = ['deny', 'all-a', 'all-b'].map((n) => unique(testInfo, n));
  const agents = [];
  for (const name of names) {
    const agent = await connectAgent(await createAgent(page, testInfo, name));
    const asked = await agent.call('run_tool', { vendor: 'widgets', name: 'create_widget', input: { name: `w-${name}` } });
    expect(asked.structuredContent.error.code).toBe('approval_required');
    agents.push(agent);
  }
  const [denied, first, second] = names;

  // the filters narrow the list, and say how many of all are shown
  await goto(page, testInfo, '/approvals');
  const filter = page.locator('form.approvals-filter');
  await filter.getByLabel('Agent').selectOption(denied);
  await filter.getByLabel('State').selectOption('pending');
  await filter.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(new RegExp(`agent=${denied}.*state=pending`));
  await ready(page, testInfo);
  const rows = page.locator('table.approvals tbody tr');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute('data-agent', denied);
  await expect(filter.getByRole('status')).toContainText('1 of');
  await shot(page, testInfo, 'approvals-filtered');

  // Deny asks for a reason first; the agent's next call is told it
  const row = page.locator(`tr[data-agent="${denied}"][data-tool="${TOOL}"]`);
  await row.locator('summary', { hasText: 'Deny' }).click();
  await row.getByLabel('Reason (optional; the agent is told)').fill('use the sandbox vendor for tests');
  await shot(page, testInfo, 'approval-deny-reason');
  await row.getByRole('button', { name: `Deny ${TOOL} for ${denied}` }).click();
  // the filter still asks for pending ones: the denied row leaves the list
  await expect(row).toHaveCount(0);
  await goto(page, testInfo, `/approvals?agent=${denied}&state=denied`);
  await expect(row).toHaveAttribute('data-state', 'denied');
  await expect(row.locator('.reason')).toContainText('use the sandbox vendor for tests');
  await row.locator('summary', { hasText: 'Decisions (1)' }).click();
  await expect(row.locator('.decisions li')).toContainText('denied by admin');
  await shot(page, testInfo, 'approval-denied-with-reason');
  const refused = await agents[0].call('run_tool', { vendor: 'widgets', name: 'create_widget', input: { name: 'again' } });
  expect(refused.structuredContent.error.code).toBe('approval_denied');
  expect(refused.structuredContent.error.reason).toBe('use the sandbox vendor for tests');

  // one approval for every agent the tool waits for (other tests' agents may wait too)
  await goto(page, testInfo, `/approvals?agent=${first}`);
  const mine = page.locator(`tr[data-agent="${first}"][data-tool="${TOOL}"]`);
  const all = mine.getByRole('button', { name: /^Approve widgets__create_widget version \d+ for all \d+ waiting agents$/ });
  await expect(all).toBeVisible();
  await all.click();
  if (testInfo.project.name === 'hydrated') {
    // without JavaScript the page comes back with the rows decided, and no status line
    await expect(page.locator('#approved-all')).toContainText(first);
    await expect(page.locator('#approved-all')).toContainText(second);
  }
  await expect(mine).toHaveAttribute('data-state', 'granted');
  await shot(page, testInfo, 'approvals-approved-for-all');
  for (const agent of agents.slice(1)) {
    const ran = await agent.call('run_tool', { vendor: 'widgets', name: 'create_widget', input: { name: 'now' } });
    expect(ran.isError).toBeFalsy();
  }
  await goto(page, testInfo, `/approvals?agent=${second}&state=granted`);
  await expect(page.locator(`tr[data-agent="${second}"]`)).toHaveAttribute('data-state', 'granted');
  for (const agent of agents) await agent.client.close();
});
