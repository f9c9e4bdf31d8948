// The operator console's end-to-end test in headless Chromium, in a small Spring Boot application that mounts it
// through the starter, driven by playwright-core. ConsoleBrowserTest starts the application and prepares:
//
//   BASE_URL             the application, e.g. http://127.0.0.1:41234
//   CONSOLE_PATH         where the console is mounted, e.g. /ops/console
//   TOKEN                the bearer token the application's ConsoleAuthorizer accepts
//   UNCERTAIN_KEY        the key of an uncertain record (scope tenant-a, operation POST /orders)
//   EVENT_ID             a dead outbox event, whose endpoint accepts events again: the console replays it
//   CROSS_SITE_EVENT_ID  another dead event, which a page of another site tries to discard
//   SCREENSHOT_DIR       where the screenshots go, one per step
//   CHROMIUM             the browser (default /usr/bin/chromium)
//
// It exits 0 only when every step passed.
import { chromium } from 'playwright-core';
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
const CONSOLE = `${BASE_URL}${required('CONSOLE_PATH')}`;
const TOKEN = required('TOKEN');
const UNCERTAIN_KEY = required('UNCERTAIN_KEY');
const EVENT_ID = required('EVENT_ID');
const CROSS_SITE_EVENT_ID = required('CROSS_SITE_EVENT_ID');
const SCREENSHOT_DIR = required('SCREENSHOT_DIR');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function log(message) {
  console.log(`[e2e] ${message}`);
}

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

let shots = 0;

async function screenshot(page, name) {
  shots += 1;
  const file = join(SCREENSHOT_DIR, `${String(shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  log(`screenshot ${file}`);
}

/** Answers the page's prompts and confirmations in order, while {@code action} runs. */
async function answering(page, replies, action) {
  const asked = [];
  const reply = (dialog) => {
    asked.push(dialog.message());
    return dialog.accept(replies[asked.length - 1]);
  };
  page.on('dialog', reply);
  try {
    await action();
  } finally {
    page.off('dialog', reply);
  }
  return asked;
}

async function run(page) {
  log('the page loads under the strict Content-Security-Policy and asks for the key');
  const loaded = await page.goto(`${CONSOLE}/`);
  check(loaded.status() === 200, `the page answered ${loaded.status()}`);
  const csp = loaded.headers()['content-security-policy'] || '';
  check(csp.includes("default-src 'none'") && csp.includes("script-src 'self'")
    && csp.includes("frame-ancestors 'none'") && !csp.includes('unsafe-inline'), `the CSP is strict: ${csp}`);
  await page.getByTestId('login').waitFor({ state: 'visible' });
  await page.getByTestId('login-key').fill(`wrong-${TOKEN}`);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('login-error').waitFor({ state: 'visible' });
  check(await page.getByTestId('records-panel').isHidden(), 'a wrong key opens nothing');
  await screenshot(page, 'refused');

  log('the right key opens it, and names the operator');
  await page.getByTestId('login-key').fill(TOKEN);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('records-panel').waitFor({ state: 'visible' });
  check((await page.getByTestId('operator').textContent()) === 'ops', 'the operator is named');

  log('the uncertain record shows');
  await page.getByTestId('records-state').selectOption('uncertain');
  await page.getByTestId('records-search').fill(UNCERTAIN_KEY);
  await page.getByTestId('records-submit').click();
  const row = page.locator(`[data-testid="record-row"][data-key="${UNCERTAIN_KEY}"]`);
  await row.waitFor();
  check(await row.getAttribute('data-state') === 'uncertain', 'the record is uncertain');
  await screenshot(page, 'uncertain');

  log('it is completed with an answer and a reason');
  const asked = await answering(page, ['201', '{"order":"ord_1","status":"paid"}', 'the provider shows the charge'],
    async () => {
      await row.getByTestId('resolve-complete').click();
      await page.getByTestId('notice').filter({ hasText: 'Resolved' }).waitFor();
    });
  check(asked.length === 3 && /status/.test(asked[0]) && /body/.test(asked[1]) && /reason/i.test(asked[2]),
    `the console asked for the status, the body and a reason: ${asked}`);
  await screenshot(page, 'resolved');

  log('the dead letter shows in the outbox and is replayed');
  await page.getByTestId('tab-outbox').click();
  await page.getByTestId('outbox-status').selectOption('dead');
  const dead = page.locator(`[data-testid="outbox-row"][data-event-id="${EVENT_ID}"][data-status="dead"]`);
  await dead.waitFor();
  check(/503/.test(await dead.getByTestId('last-error').textContent()), 'the last error names the 503');
  await screenshot(page, 'dead');
  await answering(page, [''], async () => {
    await dead.getByTestId('replay').click();
    await page.getByTestId('notice').filter({ hasText: 'Replayed' }).waitFor();
  });
  await page.getByTestId('outbox-status').selectOption('delivered');
  await page.locator(`[data-testid="outbox-row"][data-event-id="${EVENT_ID}"][data-status="delivered"]`).waitFor();
  await screenshot(page, 'delivered');

  log('a page of another site cannot act: a form post and a fetch with the token are both refused');
  const attacker = await page.context().newPage();
  await attacker.goto('about:blank');
  const target = `${CONSOLE}/api/outbox/${CROSS_SITE_EVENT_ID}/discard`;
  // first the fetch, from the blank page's own (opaque) origin: its preflight is refused, so it never goes out
  const fetched = await attacker.evaluate(async ([url, token]) => {
    try {
      const r = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${token}`,
        'X-Idem-Console': '1' } });
      return `answered ${r.status}`;
    } catch (e) {
      return `failed: ${e.message}`;
    }
  }, [target, TOKEN]);
  check(fetched.startsWith('failed'), `a cross-origin fetch with the console's header cannot pass: ${fetched}`);
  // then a form, which needs no preflight: the console refuses it as cross-site
  await attacker.setContent(`<form id="f" method="post" action="${target}"><button id="b">win</button></form>`);
  const [answer] = await Promise.all([attacker.waitForNavigation(), attacker.click('#b')]);
  check(answer.status() === 403, `the cross-site form post answered ${answer.status()}`);
  check((await answer.text()).includes('CONSOLE.cross_site'), 'it was refused as cross-site');
  await screenshot(attacker, 'cross-site-refused');
  await attacker.close();

  log('signing out forgets the key');
  await page.getByTestId('logout').click();
  await page.getByTestId('login').waitFor({ state: 'visible' });
  check(await page.evaluate(() => sessionStorage.length) === 0, 'the key is gone from sessionStorage');
  log('passed');
}

async function main() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  }
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'idem-starter-console-chromium-'));
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
      if (message.type() === 'error' && !/status of 401/.test(message.text())) {
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

main().then(() => process.exit(0), (error) => {
  console.error(`[e2e] FAILED: ${error.stack || error}`);
  process.exit(1);
});
