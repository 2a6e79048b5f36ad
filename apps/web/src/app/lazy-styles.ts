/**
 * Loads a lazy part of the app together with Mantine's styles past the first paint's, so it never
 * shows before its components' styles are there (the bundler's loader waits for a chunk's CSS).
 */
export function withRestStyles<T>(load: () => Promise<T>): Promise<T> {
  return Promise.all([import('./rest-styles.ts'), load()]).then(([, loaded]) => loaded);
}
