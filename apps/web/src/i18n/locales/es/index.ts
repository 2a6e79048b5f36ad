/** This language's namespaces, one chunk of the build (the app loads only the interface language). */
const files = import.meta.glob<Record<string, unknown>>('./*.json', { eager: true, import: 'default' });

export default Object.fromEntries(Object.entries(files).map(([path, tree]) => [path.slice(2, -'.json'.length), tree]));
