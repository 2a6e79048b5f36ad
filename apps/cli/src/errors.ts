/** A mistake in the command line or the remotes file: printed as is, exit code 2, nothing touched. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
