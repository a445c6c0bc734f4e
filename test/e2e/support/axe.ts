/**
 * axe-core in the page, for the accessibility checks of the browser tests.
 *
 * The app runs under `script-src 'self'`, so a `<script>` tag carrying axe's source (playwright's
 * addScriptTag with `content`) is refused by the page's CSP. Instead axe's source is evaluated
 * through the DevTools protocol (`page.evaluate` of a string: Runtime.evaluate), which the page's
 * CSP does not govern. The page keeps its CSP for everything else: no `bypassCSP` context.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.0 and 2.1, levels A and AA. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const;

export interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  /** Each offending node: its CSS selector and axe's summary of what fails. */
  nodes: { target: string; summary: string }[];
}

/**
 * The rules whose outcome a colour scheme can change. The app's light and dark schemes differ in
 * CSS alone (prefers-color-scheme in web/src/shared/base.css and the code highlighting): the
 * document, its names, roles, labels and order are the same in both, so a second scheme needs
 * only these (measured: screens.test.ts alone 100 s with a full second run, 84 s with these).
 */
export const COLOUR_RULES = ['color-contrast', 'link-in-text-block'] as const;

/**
 * Runs axe on the whole document (injecting it first if the page has none) and returns its
 * violations: of the WCAG 2.0/2.1 A and AA rules, or of `rules` alone when given.
 */
export async function axeViolations(page: Page, rules?: readonly string[]): Promise<AxeViolation[]> {
  const present = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
  if (!present) await page.evaluate(`${AXE_SOURCE}\n;void 0`);
  return page.evaluate(
    async ({ tags, rules }) => {
      type Axe = {
        run(
          context: Document,
          options: object,
        ): Promise<{
          violations: {
            id: string;
            impact: AxeViolation['impact'];
            help: string;
            nodes: { target: unknown[]; failureSummary?: string }[];
          }[];
        }>;
      };
      const axe = (window as unknown as { axe: Axe }).axe;
      const result = await axe.run(document, {
        runOnly: rules ? { type: 'rule', values: rules } : { type: 'tag', values: tags },
        resultTypes: ['violations'],
      });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary ?? '' })),
      }));
    },
    { tags: AXE_TAGS as unknown as string[], rules: rules ? [...rules] : undefined },
  );
}

/** The violations a test fails on. */
export const blocking = (violations: AxeViolation[]): AxeViolation[] =>
  violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');

/** One line per violation and node, for a failure message or a report. */
export const describeViolations = (violations: AxeViolation[]): string =>
  violations.map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target).join(', ')}`).join('\n');
