/**
 * Small inline icons (SVG elements, allowed by the CSP; no icon font). Decorative: each is
 * aria-hidden, and whoever shows one says what it means in text (visible or visually hidden).
 */
const common = {
  width: 14,
  height: 14,
  viewBox: '0 0 24 24',
  fill: 'none',
  stroke: 'currentColor',
  strokeWidth: 2,
  strokeLinecap: 'round',
  strokeLinejoin: 'round',
  'aria-hidden': true,
  focusable: false,
} as const;

/** A push pin: a pinned chat. */
export function PinIcon() {
  return (
    <svg {...common} className="icon">
      <path d="M9 3h6l-1 6 4 4v2H6v-2l4-4z" />
      <path d="M12 15v6" />
    </svg>
  );
}

/** A bell struck through: a muted chat. */
export function MutedIcon() {
  return (
    <svg {...common} className="icon">
      <path d="M6 17v-6a6 6 0 0 1 12 0v6" />
      <path d="M4 17h16" />
      <path d="M10 20h4" />
      <path d="M4 4l16 16" />
    </svg>
  );
}
