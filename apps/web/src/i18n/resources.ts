/** Every language's translations at once, for the tests that compare languages (the app loads one). */
const files = import.meta.glob<Record<string, unknown>>('./locales/*/*.json', { eager: true, import: 'default' });

export const resources: Record<string, Record<string, Record<string, unknown>>> = {};
for (const [path, tree] of Object.entries(files)) {
  const match = /\.\/locales\/([^/]+)\/([^/]+)\.json$/.exec(path);
  if (!match) continue;
  const [, lang, ns] = match as unknown as [string, string, string];
  (resources[lang] ??= {})[ns] = tree;
}

/** The namespaces every language has (named after the English files). */
export const NAMESPACES = Object.keys(resources.en ?? {});
