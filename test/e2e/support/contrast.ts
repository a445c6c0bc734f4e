/**
 * The contrast ratio (WCAG 2.x) of an element's text against the ground it is drawn on: its own
 * background colour, else the nearest ancestor's that is not transparent. For what axe-core leaves
 * unjudged: it reports no colour contrast for elements in a modal dialog's top layer.
 */
import type { Locator } from 'playwright-core';

export function textContrast(element: Locator): Promise<number> {
  return element.evaluate((el) => {
    const rgba = (css: string) => {
      const [r = 0, g = 0, b = 0, a = 1] = (css.match(/[\d.]+/g) ?? []).map(Number);
      return { r, g, b, a };
    };
    const luminance = ({ r, g, b }: { r: number; g: number; b: number }) => {
      const channel = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    let ground: Element | null = el;
    while (ground && rgba(getComputedStyle(ground).backgroundColor).a === 0) ground = ground.parentElement;
    const back = rgba(ground ? getComputedStyle(ground).backgroundColor : 'rgb(255, 255, 255)');
    const text = rgba(getComputedStyle(el).color);
    const [light, dark] = [luminance(text), luminance(back)].sort((x, y) => y - x) as [number, number];
    return (light + 0.05) / (dark + 0.05);
  });
}
