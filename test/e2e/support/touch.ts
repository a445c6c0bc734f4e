/**
 * What a phone asks of every screen (issue 27 item 6): each visible control a touch target of at
 * least 44×44 px (links inside message text excepted: they are words in a sentence, WCAG 2.5.8's
 * inline exception), and nothing that scrolls sideways. screens.test.ts runs these on every screen.
 */
import type { Page } from 'playwright-core';

export const PHONES = [
  { width: 390, height: 844 },
  { width: 375, height: 667 },
] as const;
export const TAP = 44;

/**
 * Every visible control smaller than TAP×TAP: buttons, links, inputs, selects, textareas, switches.
 * A checkbox or radio counts as its label when the label wraps it (the label is what is tapped).
 * Links inside message text are left out.
 */
export function smallTargets(page: Page): Promise<string[]> {
  return page.evaluate((tap) => {
    const describe = (el: Element) => {
      const name = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 30);
      const id = el.getAttribute('data-testid') ?? el.getAttribute('name') ?? el.id;
      return `${el.tagName.toLowerCase()}${id ? `#${id}` : ''}${name ? ` "${name}"` : ''}`;
    };
    const small: string[] = [];
    const controls = document.querySelectorAll('button, a[href], input, select, textarea, [role="switch"]');
    for (const control of controls) {
      if (control.closest('[data-testid="message-body"]') && control.tagName === 'A') continue;
      let target: Element = control;
      if (control instanceof HTMLInputElement && ['checkbox', 'radio'].includes(control.type)) {
        target = control.closest('label') ?? control;
      }
      const box = target.getBoundingClientRect();
      const style = getComputedStyle(control);
      const visible = box.width > 0 && box.height > 0 && style.visibility !== 'hidden';
      // Visually hidden helpers (1×1, clipped) are not targets.
      if (!visible || control.closest('.visually-hidden')) continue;
      if (box.width < tap - 0.5 || box.height < tap - 0.5)
        small.push(`${describe(control)} ${Math.round(box.width)}×${Math.round(box.height)}`);
    }
    return small;
  }, TAP);
}

/** The page's horizontal overflow: its scroll width, and elements reaching past the right edge unclipped. */
export function sideways(page: Page): Promise<{ scrollWidth: number; width: number; sticking: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const sticking: string[] = [];
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 0.5) continue;
      // Clipped by a scrolling or clipping ancestor that itself fits: fine (e.g. a wide code block).
      let clipped = false;
      for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
        const overflow = getComputedStyle(up).overflowX;
        if (overflow !== 'visible' && up.getBoundingClientRect().right <= width + 0.5) {
          clipped = true;
          break;
        }
      }
      if (!clipped) sticking.push(`${el.tagName.toLowerCase()}.${el.className} right=${Math.round(box.right)}`);
    }
    return { scrollWidth: document.scrollingElement!.scrollWidth, width, sticking };
  });
}
