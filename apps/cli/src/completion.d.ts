/** The completion script for bash, zsh or fish; undefined for another shell. */
export function completionScript(shell: string | undefined): string | undefined;
