/**
 * Accessibility (issue 27 item 7). axe-core (WCAG 2.0/2.1 A and AA) on every screen of the app at
 * 1280×800, 390×844 and 375×667, light and dark (colour contrast in dark mode counts): no serious
 * or critical violation. Each screen is also photographed at each size and scheme
 * (test-output/screenshots/a11y/), and every violation found, of any impact, is written to
 * test-output/axe/<screen>.json for the report.
 *
 * Then the keyboard alone: sending a message, answering each request type and moving between
 * chats with Tab, Shift+Tab, Enter, Space and the arrow keys, no mouse, focus always visible.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { axeViolations, blocking, describeViolations } from './support/axe.js';
import type { AxeViolation } from './support/axe.js';
import { SCREENSHOT_DIR, useBrowser } from './support/browser.js';
import { useRelay } from './support/relay.js';
import { SCREENS, openScreenContext, seedScreens, showScreen } from './support/screens.js';
import type { Seeded } from './support/screens.js';

// Seeding and the screens' reloads write from this one address: lift the per-IP write limit.
const relay = useRelay({ env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '100000' } });
const holder = useBrowser();
let seeded: Seeded;
beforeAll(async () => {
  seeded = await seedScreens(relay);
}, 60_000);

export const A11Y_VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
  { width: 375, height: 667 },
] as const;
const SCHEMES = ['light', 'dark'] as const;
const AXE_DIR = join(SCREENSHOT_DIR, '..', 'axe');
const SHOTS = join(SCREENSHOT_DIR, 'a11y');

describe('axe-core finds no serious or critical violation', () => {
  for (const screen of SCREENS) {
    it(`on ${screen.name}, at every size, light and dark`, async () => {
      mkdirSync(AXE_DIR, { recursive: true });
      mkdirSync(SHOTS, { recursive: true });
      const found: Record<string, AxeViolation[]> = {};
      const { context, page } = await openScreenContext(holder.browser, relay, screen, {
        viewport: A11Y_VIEWPORTS[0],
      });
      try {
        for (const viewport of A11Y_VIEWPORTS) {
          await page.setViewportSize(viewport);
          await showScreen(page, relay, seeded, screen);
          for (const colorScheme of SCHEMES) {
            await page.emulateMedia({ colorScheme });
            const view = `${viewport.width}x${viewport.height}-${colorScheme}`;
            await page.screenshot({ path: join(SHOTS, `${screen.name}-${view}.png`) });
            found[view] = await axeViolations(page);
          }
        }
      } finally {
        writeFileSync(join(AXE_DIR, `${screen.name}.json`), JSON.stringify(found, null, 2));
        await context.close();
      }
      const failures = Object.entries(found)
        .filter(([, violations]) => blocking(violations).length > 0)
        .map(([view, violations]) => `${view}:\n${describeViolations(blocking(violations))}`);
      expect(failures.join('\n\n')).toBe('');
    }, 180_000);
  }
});
