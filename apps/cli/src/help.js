/**
 * What `skyferry --help` and `--version` need, and nothing more: the commands, the options and the
 * help text load without the engine, the providers or the contract's schemas (a help answers in
 * Node's start-up time). The lists of choices are the contract's, written out here; a test holds
 * them equal (help.test.ts).
 */
// Plain JavaScript (help.d.ts gives its types): a TypeScript module would load Node's type
// stripper first, about as long again as Node's own start-up.
import { readFile } from 'node:fs/promises';

/** The contract's SAME_NAME_POLICIES, FILTER_CATEGORIES, CONFLICT_RESOLUTIONS and CLOUD_KINDS. */
export const HELP_LISTS = {
  sameName: ['overwrite', 'skip', 'size_differs', 'size_differs_or_newer'],
  categories: ['text', 'ppt', 'excel', 'pdf', 'audio', 'picture', 'video', 'archive', 'installer'],
  conflicts: ['keep_both', 'newer', 'larger', 'source'],
  kinds: [
    'google_drive',
    'google_drive_shared',
    'onedrive',
    'onedrive_business',
    'dropbox',
    'dropbox_business',
    'box',
    'google_photos',
    'amazon_s3',
    'wasabi',
    'backblaze_b2',
    's3_compatible',
    'webdav',
    'sftp',
    'ftp',
    'local',
  ],
};
const { sameName: SAME_NAME_POLICIES, categories: FILTER_CATEGORIES, conflicts: CONFLICT_RESOLUTIONS } = HELP_LISTS;
const CLI_KINDS = HELP_LISTS.kinds;

export const COMMANDS = {
  copy: { mode: 'migrate', args: '<source>... <target>', about: 'copy files and folders into a folder; never deletes' },
  move: {
    mode: 'migrate',
    args: '<source>... <target>',
    about: 'copy, then delete each source file the target is checked to hold the same',
  },
  sync: { mode: 'one_way', args: '<source> <target>', about: "one-way sync: add and update the target's files" },
  mirror: {
    mode: 'mirror',
    args: '<source> <target>',
    about: 'make the target an exact copy (extras removed once every copy succeeded)',
  },
  incremental: {
    mode: 'incremental',
    args: '<source> <target>',
    about: 'copy only new files and files newer than the same name on the target',
  },
  bisync: {
    mode: 'two_way',
    args: '<a> <b>',
    about: 'two-way sync: changes and deletions on either side reach the other',
  },
  check: {
    args: '<source> <target>',
    about: 'compare two folders: files missing on either side, or different (writes nothing)',
  },
  ls: { args: '<path>', about: 'list a folder' },
  size: { args: '<path>', about: 'count the files below a folder and their size' },
  tree: { args: '<path>', about: 'the folders below a folder with their sizes, largest first (--level <n>)' },
  rmdirs: { args: '<path>', about: 'remove the empty folders below a folder (not the folder itself)' },
  dedupe: {
    args: '<path>',
    about: 'remove copies of files of the same content below a folder, keeping one (--keep first|newest|oldest)',
  },
  admin: {
    args: 'grant <email> <plan> | revoke <email>',
    about:
      "on the server's host, with its environment: give a plan (month|quarter|year, --until <date>) or take it back",
  },
  remotes: {
    args: '[add|remove|import-rclone ...]',
    about: 'list the remotes; add <name> <kind> field=value...; remove <name>; import-rclone [rclone.conf]',
  },
};

/** The filter flags: rclone's (https://rclone.org/filtering/) and the nine file types (filter-flags.ts reads them). */
export const FILTER_OPTIONS = {
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  filter: { type: 'string', multiple: true },
  'include-from': { type: 'string', multiple: true },
  'exclude-from': { type: 'string', multiple: true },
  'filter-from': { type: 'string', multiple: true },
  'min-size': { type: 'string' },
  'max-size': { type: 'string' },
  'min-age': { type: 'string' },
  'max-age': { type: 'string' },
  'ignore-case': { type: 'boolean' },
  types: { type: 'string' },
  'exclude-types': { type: 'string' },
};

export const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  config: { type: 'string' },
  'dry-run': { type: 'boolean', short: 'n' },
  transfers: { type: 'string' },
  'same-name': { type: 'string' },
  ...FILTER_OPTIONS,
  conflict: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  'no-trash': { type: 'boolean' },
  'ignore-free-space': { type: 'boolean' },
  'copy-links': { type: 'boolean', short: 'L' },
  'skip-links': { type: 'boolean' },
  resync: { type: 'boolean' },
  'one-way': { type: 'boolean' },
  download: { type: 'boolean' },
  checkers: { type: 'string' },
  'delete-empty-src-dirs': { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  keep: { type: 'string' },
  level: { type: 'string' },
  bwlimit: { type: 'string' },
  'max-transfer': { type: 'string' },
  checksum: { type: 'boolean', short: 'c' },
  'log-file': { type: 'string' },
  stats: { type: 'string' },
  'no-browser': { type: 'boolean' },
  until: { type: 'string' },
  'to-server': { type: 'string' },
};

/** The text of `skyferry --help`. */
export function helpText() {
  const width = Math.max(...Object.entries(COMMANDS).map(([n, c]) => `${n} ${c.args}`.length));
  const commands = Object.entries(COMMANDS)
    .map(([n, c]) => `  ${`${n} ${c.args}`.padEnd(width)}  ${c.about}`)
    .join('\n');
  return `Usage: skyferry <command> [options] <paths>

Commands:
${commands}

Paths: "<remote>:<path>" for a remote of the remotes file, anything else a file or folder of this
machine. copy puts each source into the target folder under its own name; the sync commands pair
the source folder's contents with the target folder's.

Options:
  -n, --dry-run              show what would be done, change nothing
      --transfers <n>        files at once (default 8)
      --same-name <policy>   copy, sync, incremental: ${SAME_NAME_POLICIES.join(' | ')}
                             (default size_differs_or_newer)
      --conflict <rule>      bisync, a file changed on both sides: ${CONFLICT_RESOLUTIONS.join(' | ')}
                             (default keep_both: the older one is renamed)
  -y, --yes                  run a sync that deletes more than half of a side's files
      --resync               bisync: start over as a merge that deletes nothing (the way on
                             when a side is missing or lists no file where the last run left files)
      --no-trash             delete for good, not to the side's trash (rmdirs, dedupe too)
      --ignore-free-space    run although the target reports too little free space
  -L, --copy-links           follow symbolic links (inside each side's folder, never round a
                             loop); by default each is left alone and reported (exit 3)
      --skip-links           leave symbolic links alone without reporting them
      --one-way              check: only that the source's files are on the target and the same
      --download             check, move: read files the two sides have no common hash for
      --checkers <n>         check: listings and comparisons at once (default 8; between two
                             local folders, comparisons 256)
      --delete-empty-src-dirs
                             move: then remove the source folders it left empty
      --keep <which>         dedupe: the copy kept, first (by path), newest or oldest (default first)
      --level <n>            tree: folder levels shown (default all)
  -c, --checksum             copy, sync, mirror: files of one size are the same when their hashes are
                             (whatever their times); without a hash both sides give, by size
      --bwlimit <bw>         bandwidth, in bytes a second (512K, 10M; up:down as 10M:1M; off), or a
                             timetable as rclone's: "08:00,512K 12:00,10M Sat-00:00,off"
      --max-transfer <size>  start no file that would take the bytes moved past this (10G)
      --stats <interval>     progress every interval when not on a terminal (default 5s; 0: none)
      --log-file <file>      warnings, failures, progress and each file done to this file
      --json                 print the result (or, with --dry-run, the plan) as JSON
  -q, --quiet                no progress
      --no-browser           remotes add of an OAuth kind: print the address to sign in at, open no browser
      --until <date>         admin grant: the plan's last day (YYYY-MM-DD, UTC); default its months
      --to-server <url>      remotes import-rclone: connect them as clouds of a Skyferry account
                             (SKYFERRY_TOKEN, or SKYFERRY_EMAIL and SKYFERRY_PASSWORD)
      --config <file>        the remotes file
  -h, --help                 this text
  -V, --version              the version

Filters (as rclone's; a file is taken when every one lets it through):
      --include <pattern>    only files matching (repeatable; "- **" then ends the rules)
      --exclude <pattern>    leave out files matching (repeatable)
      --filter <rule>        "+ pattern" takes, "- pattern" leaves out, "!" clears earlier rules
      --include-from <file>, --exclude-from <file>, --filter-from <file>
                             the same, one a line (# and ; start a remark; - reads standard input)
                             Rules in this order: includes, excludes, filters; the first that
                             matches decides. Patterns: * ? [...] {a,b} ** and {{regexp}}; a
                             leading / anchors at the top folder; a trailing / is a folder.
      --min-size <size>, --max-size <size>
                             files this size or larger / smaller (KiB, or with B K M G T P)
      --min-age <age>, --max-age <age>
                             files modified this long ago or longer / or less (seconds, or with
                             ms s m h d w M y; or a date such as 2024-01-31)
      --ignore-case          patterns match whatever the case of letters
      --types <types>        only these file types, comma-separated:
                             ${FILTER_CATEGORIES.join(', ')}
                             (--include <types> means this too when every word is a type)
      --exclude-types <types>
                             all but these file types
  Mirror and bisync never delete what the filters leave out.

Remotes file: --config, $SKYFERRY_CONFIG, or ~/.config/skyferry/remotes.json:
  { "remotes": { "photos": { "kind": "s3_compatible", "credentials": {
      "endpoint": "https://s3.example.com", "bucket": "photos", "access_key_id": "AK...",
      "secret_access_key": { "env": "PHOTOS_SECRET" } } } } }
Kinds: ${CLI_KINDS.join(', ')} (fields as in the web app's
Add cloud form). A secret may be read from an environment variable ({ "env": "NAME" }); a file
holding secrets itself must be readable by you alone (chmod 600). Or let skyferry write it:
  skyferry remotes add photos s3_compatible endpoint=https://s3.example.com bucket=photos \\
    access_key_id=AK... secret_access_key=@env:PHOTOS_SECRET
  skyferry remotes add nas sftp host=nas.lan username=me private_key=@file:~/.ssh/id_ed25519
  (field=- reads a value from standard input: echo "$PASS" | skyferry remotes add dav webdav ... password=-)
  skyferry remotes add drive google_drive       (signs in with a browser; the OAuth client from
    GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET, or client_id= client_secret=)
Remotes may be at any address, this machine's and the LAN's included: skyferry runs as you (the
server's private-network guard does not apply here).
Resume files, two-way state and the lock that keeps a second run of the same pair from starting:
$SKYFERRY_STATE_DIR or ~/.local/state/skyferry.

Exit codes: 0 done (check: no differences), 1 files failed, names were left alone as conflicts
no rule resolves (a file and a folder of one name, names differing only in case, names that are
not UTF-8), the run stopped, another run of the pair is under way, check found differences or move
kept source files, 2 usage or remotes file mistake, 3 everything else done but symbolic links were
left alone (each is listed; see -L, --skip-links; 1 wins when both apply), 130 canceled.
`;
}

/** The command line's version (its package's). */
export async function version() {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
  return pkg.version;
}
