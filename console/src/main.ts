/**
 * The console's entry: asks for the admin token when the gateway wants one, then shows the view
 * the location's hash names (#/overview, #/destination/queue/orders, #/selector, #/reload).
 * Plain TypeScript and the DOM: a few tables and forms need no framework.
 */
import { ApiError, api, token, whenUnauthorized } from './api.js';
import { h, notify } from './dom.js';
import { showDestination } from './destination.js';
import { showOverview } from './overview.js';
import { showReload } from './reload.js';
import { showSelectorTester } from './selector.js';

const main = () => document.getElementById('main')!;
let current: AbortController | undefined;

function showLogin(message: string): void {
  current?.abort();
  document.getElementById('logout')!.hidden = true;
  const input = h('input', {
    id: 'token',
    type: 'password',
    name: 'token',
    size: 50,
    autocomplete: 'off',
    required: true,
  });
  main().replaceChildren(
    h('h2', {}, 'Admin token'),
    h(
      'form',
      {
        class: 'login',
        onsubmit: (event: Event) => {
          event.preventDefault();
          token.set(input.value.trim());
          void start();
        },
      },
      h(
        'p',
        {},
        h('label', { for: 'token' }, 'The token the gateway was started with (JMS_GATEWAY_ADMIN_TOKEN)'),
      ),
      input,
      h('button', { type: 'submit' }, 'Sign in'),
      h(
        'p',
        { class: 'hint' },
        'Kept in this tab only (session storage) and sent as an Authorization header.',
      ),
    ),
  );
  notify(message);
  input.focus();
}

function route(): void {
  current?.abort();
  current = new AbortController();
  const [view, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const target = main();
  for (const link of document.querySelectorAll('nav a'))
    link.toggleAttribute('aria-current', link.getAttribute('href') === `#/${view}`);
  switch (view) {
    case 'destination':
      showDestination(target, rest[0] ?? 'queue', decodeURIComponent(rest.slice(1).join('/')));
      break;
    case 'selector':
      showSelectorTester(target);
      break;
    case 'reload':
      showReload(target);
      break;
    default:
      showOverview(target, current.signal);
  }
  target.focus({ preventScroll: true });
}

/** Checks the token (if any) with one call, then shows the view. */
async function start(): Promise<void> {
  try {
    await api('GET', '/bridges');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return;
    notify((error as Error).message);
  }
  notify('');
  document.getElementById('logout')!.hidden = token.get() === null;
  route();
}

whenUnauthorized(showLogin);
window.addEventListener('hashchange', () => {
  if (document.getElementById('token') === null) route();
});
document.getElementById('logout')!.addEventListener('click', () => {
  token.clear();
  showLogin('Token forgotten.');
});
void start();
