/**
 * Every screen of the app (support/screens.ts) at 1280×800, 390×844 and 375×667, each loaded
 * afresh at that size, in one pass that runs every per-screen check:
 *
 * - axe-core (WCAG 2.0/2.1 A and AA, issue 27 item 7) in light, and its colour rules again in
 *   dark (colour contrast in dark mode counts; the two schemes differ in CSS colours alone), at
 *   1280 and 390: no serious or critical violation; every violation found, of any impact, is
 *   written to test-output/axe/<screen>.json for the report. Not again at 375: the app has one
 *   breakpoint (799 px: the stylesheets' only width query, and shared/focus.ts PHONE_LAYOUT), so
 *   375 and 390 lay out the same document with the same colours, and what differs with the width
 *   is what the touch checks below measure (a third of the file's axe runs: 76 s → 64 s alone);
 * - at the phone sizes (issue 27 item 6): every visible control a touch target of at least 44×44,
 *   nothing that scrolls sideways (support/touch.ts);
 * - a photograph at each size and scheme (test-output/screenshots/a11y/).
 *
 * One pass rather than one file per check: a screen's load is most of what each check costs.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COLOUR_RULES, axeViolations, blocking, describeViolations } from './support/axe.js';
import type { AxeViolation } from './support/axe.js';
import { SCREENSHOT_DIR, useBrowser } from './support/browser.js';
import { SCREENS, showScreen, useScreenPages, useSeededScreens } from './support/screens.js';
import { PHONES, TAP, sideways, smallTargets } from './support/touch.js';

const { relay, seeded } = useSeededScreens();
const holder = useBrowser();
const pageFor = useScreenPages(holder, relay);

const VIEWPORTS = [{ width: 1280, height: 800 }, ...PHONES] as const;
const SCHEMES = ['light', 'dark'] as const;
const AXE_DIR = join(SCREENSHOT_DIR, '..', 'axe');
const SHOTS = join(SCREENSHOT_DIR, 'a11y');
const isPhone = (viewport: { width: number }) => PHONES.some((phone) => phone.width === viewport.width);
/** axe runs at the desktop width and the first phone (the 375 px phone has the same layout: above). */
const runsAxe = (viewport: { width: number }) => viewport.width !== PHONES[1].width;

describe('every screen at every size', () => {
  for (const screen of SCREENS) {
    it(`${screen.name}: no serious axe violation light or dark; on phones ${TAP}×${TAP} targets and no sideways scroll`, async () => {
      mkdirSync(AXE_DIR, { recursive: true });
      mkdirSync(SHOTS, { recursive: true });
      const axe: Record<string, AxeViolation[]> = {};
      const touch: Record<string, unknown> = {};
      const page = await pageFor(screen);
      try {
        for (const viewport of VIEWPORTS) {
          await page.setViewportSize(viewport);
          await showScreen(page, relay, seeded, screen);
          if (isPhone(viewport)) {
            const small = await smallTargets(page);
            if (small.length) touch[`${viewport.width}: under ${TAP}×${TAP}`] = small;
            const overflow = await sideways(page);
            if (overflow.scrollWidth > overflow.width || overflow.sticking.length)
              touch[`${viewport.width}: sideways`] = overflow;
          }
          for (const colorScheme of SCHEMES) {
            await page.emulateMedia({ colorScheme });
            const view = `${viewport.width}x${viewport.height}-${colorScheme}`;
            await page.screenshot({ path: join(SHOTS, `${screen.name}-${view}.png`) });
            // Dark differs from light in colours alone (support/axe.ts COLOUR_RULES).
            if (runsAxe(viewport))
              axe[view] = await axeViolations(page, colorScheme === 'dark' ? COLOUR_RULES : undefined);
          }
          await page.emulateMedia({ colorScheme: 'light' });
        }
      } finally {
        writeFileSync(join(AXE_DIR, `${screen.name}.json`), JSON.stringify(axe, null, 2));
        // The next screen shares the page (support/screens.ts useScreenPages).
        await page.emulateMedia({ colorScheme: 'light' });
      }
      const failures = Object.entries(axe)
        .filter(([, violations]) => blocking(violations).length > 0)
        .map(([view, violations]) => `${view}:\n${describeViolations(blocking(violations))}`);
      expect({ axe: failures.join('\n\n'), touch }).toEqual({ axe: '', touch: {} });
    }, 240_000);
  }
});
