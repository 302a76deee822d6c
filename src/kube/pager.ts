/**
 * A list read page by page (`limit` and `continue`), to the last page: the resourceVersion of
 * the first page (later pages are served as of that version, so a watch started from it misses
 * nothing). A server that repeats a continue token, or never ends, is an error, not a loop.
 */
import { BadAnswer } from './errors';

export interface ListPage<T = unknown> {
  readonly items?: T[];
  readonly metadata?: { readonly resourceVersion?: unknown; readonly continue?: unknown };
}

export interface Listing<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

export const MAX_PAGES = 10_000;

/**
 * Calls `fetchPage` with each continue token (none for the first page) and `onPage` with each
 * page, until a page has no continue token; returns the first page's resourceVersion.
 */
export async function readPages<P extends ListPage>(
  fetchPage: (token: string | undefined, page: number) => Promise<P>,
  onPage: (p: P, page: number) => void,
  maxPages = MAX_PAGES,
): Promise<string> {
  const seen = new Set<string>();
  let token: string | undefined;
  let resourceVersion = '';
  for (let page = 1; ; page++) {
    if (page > maxPages) throw new BadAnswer(`the list did not end after ${maxPages} pages`);
    const p = await fetchPage(token, page);
    onPage(p, page);
    const rv = p.metadata?.resourceVersion;
    if (page === 1 && typeof rv === 'string') resourceVersion = rv;
    const next = p.metadata?.continue;
    if (next === undefined || next === null || next === '') return resourceVersion;
    if (typeof next !== 'string') throw new BadAnswer(`page ${page}: metadata.continue is not a string`);
    if (seen.has(next)) throw new BadAnswer(`page ${page}: the server repeated the continue token ${JSON.stringify(next)}`);
    seen.add(next);
    token = next;
  }
}

/** Every item of every page. */
export async function listAll<T>(fetchPage: (token: string | undefined, page: number) => Promise<ListPage<T>>): Promise<Listing<T>> {
  const items: T[] = [];
  const resourceVersion = await readPages(fetchPage, (p) => { for (const it of p.items ?? []) items.push(it); });
  return { items, resourceVersion };
}
