/** No app tabs until the apps feature lands. */
export function PlaceholderAppTabs() {
  return null;
}
