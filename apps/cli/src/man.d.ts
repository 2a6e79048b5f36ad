export function manPage(version: string, date: string): string;
