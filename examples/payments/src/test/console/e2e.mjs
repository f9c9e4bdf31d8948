// The operator console's end-to-end test in headless Chromium, driven by playwright-core. ConsoleBrowserTest starts
// the service and a webhook endpoint that answers 500 (so the payment's event dies), then runs this script:
//
//   BASE_URL          the service, e.g. http://127.0.0.1:41234
//   ADMIN_KEY         the service's payments.admin-key (the service runs with payments.admin-allow-loopback=false)
//   TENANT_KEY        a tenant's API key, whose tenant has the failing endpoint subscribed to payment.succeeded
//   SINK_CONTROL_URL  POST here to make the endpoint answer 200 from then on
//   SCREENSHOT_DIR    where the screenshots go, one per step
//   CHROMIUM          the browser (default /usr/bin/chromium)
//
// It prints PAYMENT_ID=... and EVENT_ID=... for the Java side, and exits 0 only when every step passed.
import { chromium } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TIMEOUT = 60_000;

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is required`);
  return value;
}

const BASE_URL = required('BASE_URL').replace(/\/+$/, '');
const ADMIN_KEY = required('ADMIN_KEY');
const TENANT_KEY = required('TENANT_KEY');
const SINK_CONTROL_URL = required('SINK_CONTROL_URL');
const SCREENSHOT_DIR = required('SCREENSHOT_DIR');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function log(message) {
  console.log(`[e2e] ${message}`);
}

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

// ---------------------------------------------------------------------------------------------- the API, from node

async function api(method, path, { key, idempotencyKey, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (key) headers.Authorization = `Bearer ${key}`;
  if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${BASE_URL}${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, json, text };
}

function pay(idempotencyKey, amount, account = 'acct_console') {
  return api('POST', '/payments', {
    key: TENANT_KEY, idempotencyKey, body: { account_id: account, amount, currency: 'EUR' },
  });
}

async function faults(body) {
  const answer = await api('PUT', '/admin/faults', { key: ADMIN_KEY, body });
  check(answer.status === 200, `PUT /admin/faults answered ${answer.status} ${answer.text}`);
}

/** Paces the traffic for the charts: rates are counted per poll of the page. */
function pause(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}

/** Polls probe() until it answers a truthy value, for up to TIMEOUT. */
async function until(what, probe) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(100);
  }
}

function inProgress(key) {
  return until(`the record of ${key} in progress`, async () => {
    const page = await api('GET', `/console/api/records?state=in_progress&key=${encodeURIComponent(key)}`,
      { key: ADMIN_KEY });
    return page.status === 200 && page.json.records.length === 1;
  });
}

// ---------------------------------------------------------------------------------------------- the browser

let shots = 0;

async function screenshot(page, name) {
  shots += 1;
  const file = join(SCREENSHOT_DIR, `${String(shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  log(`screenshot ${file}`);
}

async function signIn(page, key) {
  await page.getByTestId('login-key').fill(key);
  await page.getByTestId('login-submit').click();
}

async function main() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  }
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'idem-console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1360, height: 860 },
  });
  const problems = [];
  try {
    context.setDefaultTimeout(TIMEOUT);
    const page = context.pages()[0] || await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // a refused sign-in logs its 401 as a failed resource load; anything else is a fault of the page
      if (message.type() === 'error' && !message.text().includes('status of 401')) {
        problems.push(`console error: ${message.text()}`);
      }
    });
    await run(page);
    check(problems.length === 0, `the page reported errors:\n${problems.join('\n')}`);
  } catch (error) {
    for (const page of context.pages()) {
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'failure.png'), fullPage: true }).catch(() => {});
    }
    if (problems.length > 0) log(`the page reported:\n${problems.join('\n')}`);
    throw error;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

async function run(page) {
  log('a payment through the API, with the tenant key');
  const key = `console-e2e-${randomUUID()}`;
  const paid = await pay(key, 4200);
  check(paid.status === 201, `POST /payments answered ${paid.status} ${paid.text}`);
  const paymentId = paid.json.id;
  console.log(`PAYMENT_ID=${paymentId}`);

  log('the console asks for the admin key');
  await page.goto(`${BASE_URL}/console/?refresh=1000`);
  await page.getByTestId('login').waitFor({ state: 'visible' });
  await screenshot(page, 'login');

  log('a tenant key does not open it');
  await signIn(page, TENANT_KEY);
  await page.getByTestId('login-error').waitFor({ state: 'visible' });
  check((await page.getByTestId('login-error').textContent()).includes('not the admin key'),
    'the refusal says the key is not the admin key');
  check(await page.getByTestId('records-panel').isHidden(), 'the records stay hidden');
  check(await page.evaluate(() => sessionStorage.length) === 0, 'a refused key is not kept');
  await screenshot(page, 'tenant-key-refused');

  log('the admin key opens it');
  await signIn(page, ADMIN_KEY);
  await page.getByTestId('records-panel').waitFor({ state: 'visible' });

  log('the payment\'s record, found by its key');
  await page.getByTestId('records-state').selectOption('any');
  await page.getByTestId('records-search').fill(key.slice(0, 24));
  await page.getByTestId('records-submit').click();
  const record = page.locator(`[data-testid="record-row"][data-key="${key}"]`);
  await record.waitFor();
  check(await record.getAttribute('data-state') === 'completed', 'the record is completed');
  check((await record.textContent()).includes('POST /payments'), 'the record names its operation');
  await screenshot(page, 'records');

  log('an in-progress record shows its lease age');
  await faults({ provider_latency_ms: 6000 });
  const slowKey = `console-e2e-slow-${randomUUID()}`;
  const slow = pay(slowKey, 700);
  try {
    // the search runs once when submitted (then every 30 s): submit it once the record exists
    await inProgress(slowKey);
    await page.getByTestId('records-state').selectOption('in_progress');
    await page.getByTestId('records-search').fill(slowKey);
    await page.getByTestId('records-submit').click();
    const slowRow = page.locator(`[data-testid="record-row"][data-key="${slowKey}"]`);
    await slowRow.waitFor();
    await page.waitForFunction((k) => {
      const row = document.querySelector(`[data-testid="record-row"][data-key="${k}"]`);
      return row && /^\d/.test(row.querySelector('[data-testid="lease-age"]').textContent);
    }, slowKey);
    check(await slowRow.getAttribute('data-state') === 'in_progress', 'the slow payment is in progress');
    await screenshot(page, 'records-in-progress');

    log('evicting a record under a live lease asks twice; declined, the record stays');
    const questions = [];
    const answer = (dialog) => {
      questions.push(dialog.message());
      return questions.length === 1 ? dialog.accept() : dialog.dismiss();
    };
    page.on('dialog', answer);
    try {
      await slowRow.getByTestId('evict').click();
      await until('the second confirmation', async () => questions.length >= 2);
    } finally {
      page.off('dialog', answer);
    }
    check(/in progress, its lease ends in \d/.test(questions[0]), `the first question says the lease: ${questions[0]}`);
    check(/lease .* is live/.test(questions[1]), `the second question warns of the live lease: ${questions[1]}`);
    check(await slowRow.isVisible(), 'the declined eviction left the record');
  } finally {
    await faults({ provider_latency_ms: 0 });
  }
  const slowAnswer = await slow;
  check(slowAnswer.status === 201, `the slow payment answered ${slowAnswer.status} ${slowAnswer.text}`);

  log('evicting a record');
  await page.getByTestId('records-state').selectOption('completed');
  await page.getByTestId('records-search').fill(slowKey);
  await page.getByTestId('records-submit').click();
  const evicted = page.locator(`[data-testid="record-row"][data-key="${slowKey}"]`);
  await evicted.waitFor();
  let question = '';
  page.once('dialog', (dialog) => {
    question = dialog.message();
    return dialog.accept();
  });
  await evicted.getByTestId('evict').click();
  await page.getByTestId('notice').filter({ hasText: 'Evicted' }).waitFor();
  await evicted.waitFor({ state: 'detached' });
  check(question.includes('It is completed.'), `the question says the record's state: ${question}`);
  const gone = await api('GET', `/console/api/records?state=any&key=${encodeURIComponent(slowKey)}`,
    { key: ADMIN_KEY });
  check(gone.status === 200 && gone.json.records.length === 0, `the evicted record is gone: ${gone.text}`);

  log('the payment\'s webhook, dead, in the outbox');
  await page.getByTestId('tab-outbox').click();
  const dead = page.locator(`[data-testid="outbox-row"][data-aggregate-id="${paymentId}"][data-status="dead"]`);
  await dead.waitFor();
  const eventId = await dead.getAttribute('data-event-id');
  console.log(`EVENT_ID=${eventId}`);
  check(/500/.test(await dead.getByTestId('last-error').textContent()), 'the last error names the 500');
  await dead.getByTestId('history-toggle').click();
  const history = page.locator(`[data-testid="history"][data-event-id="${eventId}"]`);
  await history.waitFor();
  const attempts = await history.getByTestId('attempt').count();
  check(attempts >= 1, 'the history lists the attempts');
  check((await history.textContent()).includes('500'), 'the history shows the endpoint\'s 500');
  check(Number(await page.getByTestId('outbox-dead').textContent()) >= 1, 'the dead count shows it');
  await screenshot(page, 'outbox-dead');

  log('the endpoint recovers; replay');
  const control = await fetch(SINK_CONTROL_URL, { method: 'POST' });
  check(control.ok, `the sink's control answered ${control.status}`);
  await dead.getByTestId('replay').click();
  await page.getByTestId('notice').filter({ hasText: 'Replayed' }).waitFor();
  await page.getByTestId('outbox-status').selectOption('delivered');
  const delivered = page.locator(`[data-testid="outbox-row"][data-event-id="${eventId}"][data-status="delivered"]`);
  await delivered.waitFor();
  const after = await api('GET', `/admin/outbox/${eventId}`, { key: ADMIN_KEY });
  check(after.json.status === 'delivered', `the event is delivered: ${after.text}`);
  check(after.json.attempts === attempts + 1, `one more attempt after the replay: ${after.text}`);
  await screenshot(page, 'outbox-delivered');

  log('some traffic for the charts: new keys, replays, mismatches, in-progress conflicts');
  const keys = [];
  for (let round = 0; round < 8; round += 1) {
    const fresh = `console-e2e-traffic-${randomUUID()}`;
    check((await pay(fresh, 100 + round)).status === 201, 'a traffic payment');
    keys.push([fresh, 100 + round]);
    for (const [k, amount] of keys.slice(0, Math.min(keys.length, 1 + (round % 3)))) {
      check((await pay(k, amount)).status === 201, 'a replay');
    }
    if (round % 3 === 1) check((await pay(keys[0][0], 999)).status === 422, 'a payload mismatch');
    if (round === 5) {
      const declined = await pay(`console-e2e-declined-${randomUUID()}`, 300, 'acct_declined_console');
      check(declined.status === 402, `a declined payment answered ${declined.status} ${declined.text}`);
    }
    await pause(700);
  }
  // long enough for two duplicates to arrive while the first runs, well under the lease (the default 30 s)
  await faults({ provider_latency_ms: 4500 });
  try {
    const conflictKey = `console-e2e-conflict-${randomUUID()}`;
    const first = pay(conflictKey, 55);
    await inProgress(conflictKey);
    const answers = await Promise.all([pay(conflictKey, 55), pay(conflictKey, 55)]);
    check(answers.every((a) => a.status === 409), `duplicates in flight get 409: ${answers.map((a) => a.status)}`);
    check((await first).status === 201, 'the first of the conflicting requests');
  } finally {
    await faults({ provider_latency_ms: 0 });
  }

  log('the charts');
  await page.getByTestId('tab-charts').click();
  await page.waitForFunction(
    () => Number(document.querySelector('[data-testid="total-in_progress"]')?.textContent) > 0);
  await page.locator('[data-testid="series-replayed"]').waitFor();
  const bars = await page.locator('[data-testid="age-bar"]').evaluateAll(
    (nodes) => nodes.map((n) => Number(n.getAttribute('data-count'))));
  check(bars.reduce((a, b) => a + b, 0) > 0, `the key-age histogram has replays: ${bars}`);
  await page.waitForFunction(() => {
    const line = document.querySelector('[data-testid="series-replayed"]');
    return line && line.getAttribute('points').split(' ').length >= 12;
  });
  await screenshot(page, 'charts');

  log('every record, one of them in progress');
  await faults({ provider_latency_ms: 5000 });
  const pendingKey = `console-e2e-pending-${randomUUID()}`;
  const pending = pay(pendingKey, 900);
  try {
    await inProgress(pendingKey);
    await page.getByTestId('tab-records').click();
    await page.getByTestId('records-state').selectOption('any');
    await page.getByTestId('records-search').fill('');
    await page.getByTestId('records-submit').click();
    await page.locator(`[data-testid="record-row"][data-key="${pendingKey}"][data-state="in_progress"]`).waitFor();
    await page.locator('[data-testid="record-row"][data-state="failed"]').first().waitFor();
    await screenshot(page, 'records-overview');
  } finally {
    await faults({ provider_latency_ms: 0 });
  }
  check((await pending).status === 201, 'the pending payment completes');

  log('an uncertain payment, completed by hand with an answer and a reason');
  const uncertainKey = `console-e2e-uncertain-${randomUUID()}`;
  await faults({ provider_error_rate: 1 });
  try {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const down = await pay(uncertainKey, 450, 'acct_console_uncertain');
      if (down.status === 409) break;
      check(down.status === 503, `while the provider is down a payment answers 503: ${down.status} ${down.text}`);
    }
    const conflict = await pay(uncertainKey, 450, 'acct_console_uncertain');
    check(conflict.status === 409 && conflict.json.code === 'CONFLICT.idempotency.outcome_uncertain',
      `an uncertain payment answers 409 outcome_uncertain: ${conflict.status} ${conflict.text}`);
    await page.getByTestId('tab-records').click();
    await page.getByTestId('records-state').selectOption('uncertain');
    await page.getByTestId('records-search').fill(uncertainKey);
    await page.getByTestId('records-submit').click();
    const uncertainRow = page.locator(`[data-testid="record-row"][data-key="${uncertainKey}"]`);
    await uncertainRow.waitFor();
    check(await uncertainRow.getAttribute('data-state') === 'uncertain', 'the record is uncertain');
    const hint = await uncertainRow.getByTestId('record-key').getAttribute('title');
    check(/^provider key: \S+$/.test(hint || ''), `the key's tooltip shows the provider key: ${hint}`);
    await screenshot(page, 'records-uncertain');
    const replies = ['201', '{"status":"captured_by_hand"}', 'the provider dashboard shows the charge'];
    const asked = [];
    const reply = (dialog) => {
      asked.push(dialog.message());
      return dialog.accept(replies[asked.length - 1]);
    };
    page.on('dialog', reply);
    try {
      await uncertainRow.getByTestId('resolve-complete').click();
      await page.getByTestId('notice').filter({ hasText: 'Resolved' }).waitFor();
    } finally {
      page.off('dialog', reply);
    }
    check(asked.length === 3 && /status/.test(asked[0]) && /body/.test(asked[1])
      && asked[1].includes(hint) && /reason/i.test(asked[2]),
      `the console asked for the status, the body and a reason: ${asked}`);
    const listed = await api('GET', `/console/api/records?state=any&key=${encodeURIComponent(uncertainKey)}`,
      { key: ADMIN_KEY });
    check(listed.status === 200 && listed.json.records.length === 1
      && listed.json.records[0].state === 'completed', `the record is completed: ${listed.text}`);
    const audit = await api('GET', `/console/api/records/history?${new URLSearchParams({
      scope: listed.json.records[0].scope, operation: 'POST /payments', key: uncertainKey })}`, { key: ADMIN_KEY });
    check(audit.status === 200 && audit.json.history.length === 1
      && audit.json.history[0].actor === 'admin (console)' && audit.json.history[0].to === 'completed',
      `the audit names the console's admin: ${audit.text}`);
  } finally {
    await faults({ provider_error_rate: 0 });
  }
  const decided = await pay(uncertainKey, 450, 'acct_console_uncertain');
  check(decided.status === 201 && decided.json.status === 'captured_by_hand',
    `the decided payment replays the operator's answer: ${decided.status} ${decided.text}`);

  log('signing out forgets the key');
  await page.getByTestId('logout').click();
  await page.getByTestId('login').waitFor({ state: 'visible' });
  check(await page.evaluate(() => sessionStorage.length) === 0, 'the key is gone from sessionStorage');
  log('passed');
}

main().then(() => process.exit(0), (error) => {
  console.error(`[e2e] FAILED: ${error.stack || error}`);
  process.exit(1);
});
