/**
 * Screen sizes the layout changes at, as media queries (Mantine's breakpoints, so that they agree
 * with `hiddenFrom`/`visibleFrom`). Read them with `useMediaQuery(query, false, {
 * getInitialValueInEffect: false })`, so the first paint already has the right layout.
 */
/** Below Mantine's `sm` (48em): the sidebar is a drawer, settings tabs run across. */
export const NARROW_SCREEN = '(max-width: 47.99em)';
/** Below Mantine's `xs` (36em), phones: dialogs fill the screen. */
export const PHONE_SCREEN = '(max-width: 35.99em)';
