/**
 * `skyferry completion bash|zsh|fish`: a completion script for the shell, made from the commands
 * and options of the help (help.js): commands, options with their descriptions, the choices of
 * --same-name, --conflict and --keep, the remotes actions and kinds, files elsewhere. Plain
 * JavaScript, as help.js: a shell runs it at each start.
 *
 *   bash: source <(skyferry completion bash)      (or save it in ~/.local/share/bash-completion/completions/skyferry)
 *   zsh:  skyferry completion zsh > "${fpath[1]}/_skyferry"
 *   fish: skyferry completion fish > ~/.config/fish/completions/skyferry.fish
 */
import { COMMANDS, HELP_LISTS, OPTIONS, helpText } from './help.js';

const CHOICES = {
  'same-name': HELP_LISTS.sameName,
  conflict: HELP_LISTS.conflicts,
  keep: ['first', 'newest', 'oldest'],
};
const FILE_OPTIONS = ['config', 'log-file'];
const REMOTES_ACTIONS = ['add', 'remove', 'import-rclone'];

/** Each option with its short letter and the first line of its help, read from the help text. */
function options() {
  const lines = helpText().split('\n');
  return Object.entries(OPTIONS).map(([name, spec]) => {
    const at = lines.findIndex((l) => new RegExp(`^\\s+(-\\w, )?--${name}(\\s|$)`).test(l));
    const own = (lines[at] ?? '').replace(new RegExp(`^\\s+(-\\w, )?--${name}(\\s<[^>]+>)?`), '').trim();
    // A long option's help starts on the next line.
    const about = (own || (lines[at + 1] ?? '').trim()).replace(/'/g, '');
    return { name, short: spec.short, takesValue: spec.type === 'string', about };
  });
}

const quote = (s) => `'${s.replace(/'/g, '')}'`;

function bash() {
  const opts = options();
  const words = opts.flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]).join(' ');
  const choiceCases = Object.entries(CHOICES)
    .map(([name, list]) => `    --${name}) COMPREPLY=( $(compgen -W "${list.join(' ')}" -- "$cur") ); return ;;`)
    .join('\n');
  return `# bash completion for skyferry: source <(skyferry completion bash)
_skyferry() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then
    COMPREPLY=( $(compgen -W "${Object.keys(COMMANDS).join(' ')} help completion" -- "$cur") ); return
  fi
  case "$prev" in
${choiceCases}
    ${FILE_OPTIONS.map((o) => `--${o}`).join('|')}) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;
    ${opts
      .filter((o) => o.takesValue && !CHOICES[o.name] && !FILE_OPTIONS.includes(o.name))
      .map((o) => `--${o.name}`)
      .join('|')}) COMPREPLY=(); return ;;
  esac
  if [[ \${COMP_WORDS[1]} == completion && $COMP_CWORD -eq 2 ]]; then
    COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ); return
  fi
  if [[ \${COMP_WORDS[1]} == remotes && $COMP_CWORD -eq 2 && $cur != -* ]]; then
    COMPREPLY=( $(compgen -W "${REMOTES_ACTIONS.join(' ')}" -- "$cur") ); return
  fi
  if [[ \${COMP_WORDS[1]} == remotes && \${COMP_WORDS[2]} == add && $COMP_CWORD -eq 4 ]]; then
    COMPREPLY=( $(compgen -W "${HELP_LISTS.kinds.join(' ')}" -- "$cur") ); return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=( $(compgen -W "${words}" -- "$cur") ); return
  fi
  COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o filenames -F _skyferry skyferry
`;
}

function zsh() {
  const opts = options();
  const describe = (name, about) => quote(`${name.replace(/:/g, '\\:')}:${about}`);
  const commands = Object.entries(COMMANDS)
    .map(([name, c]) => `    ${describe(name, c.about)}`)
    .join('\n');
  const optionLines = opts
    .flatMap((o) => [
      `    ${describe(`--${o.name}`, o.about)}`,
      ...(o.short ? [`    ${describe(`-${o.short}`, o.about)}`] : []),
    ])
    .join('\n');
  const choiceCases = Object.entries(CHOICES)
    .map(([name, list]) => `    --${name}) _values ${quote(name)} ${list.join(' ')}; return ;;`)
    .join('\n');
  return `#compdef skyferry
# zsh completion for skyferry: skyferry completion zsh > "\${fpath[1]}/_skyferry"
_skyferry() {
  local -a commands options
  commands=(
${commands}
    'help:this text'
    'completion:a completion script for bash, zsh or fish'
  )
  options=(
${optionLines}
  )
  if (( CURRENT == 2 )) && [[ $PREFIX != -* ]]; then _describe 'command' commands; return; fi
  case $words[CURRENT-1] in
${choiceCases}
    ${FILE_OPTIONS.map((o) => `--${o}`).join('|')}) _files; return ;;
  esac
  if [[ $words[2] == completion ]] && (( CURRENT == 3 )); then _values 'shell' bash zsh fish; return; fi
  if [[ $words[2] == remotes ]] && (( CURRENT == 3 )) && [[ $PREFIX != -* ]]; then
    _values 'action' ${REMOTES_ACTIONS.join(' ')}; return
  fi
  if [[ $words[2] == remotes && $words[3] == add ]] && (( CURRENT == 5 )); then
    _values 'kind' ${HELP_LISTS.kinds.join(' ')}; return
  fi
  if [[ $PREFIX == -* ]]; then _describe 'option' options; return; fi
  _files
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _skyferry "$@"; else compdef _skyferry skyferry; fi
`;
}

function fish() {
  const lines = [
    '# fish completion for skyferry: skyferry completion fish > ~/.config/fish/completions/skyferry.fish',
    'complete -c skyferry -f',
  ];
  for (const [name, c] of Object.entries(COMMANDS)) {
    lines.push(`complete -c skyferry -n __fish_use_subcommand -a ${name} -d ${quote(c.about)}`);
  }
  lines.push("complete -c skyferry -n __fish_use_subcommand -a completion -d 'a completion script for a shell'");
  lines.push("complete -c skyferry -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'");
  lines.push(
    `complete -c skyferry -n '__fish_seen_subcommand_from remotes; and not __fish_seen_subcommand_from ${REMOTES_ACTIONS.join(' ')}' -a ${quote(REMOTES_ACTIONS.join(' '))}`,
  );
  lines.push(
    `complete -c skyferry -n '__fish_seen_subcommand_from add; and test (count (commandline -opc)) -eq 4' -a ${quote(HELP_LISTS.kinds.join(' '))}`,
  );
  for (const o of options()) {
    const short = o.short ? ` -s ${o.short}` : '';
    const value = CHOICES[o.name]
      ? ` -x -a ${quote(CHOICES[o.name].join(' '))}`
      : FILE_OPTIONS.includes(o.name)
        ? ' -r -F'
        : o.takesValue
          ? ' -x'
          : '';
    lines.push(`complete -c skyferry -l ${o.name}${short}${value} -d ${quote(o.about)}`);
  }
  lines.push("complete -c skyferry -n 'not __fish_use_subcommand' -F");
  return `${lines.join('\n')}\n`;
}

/** The script for `shell`, or undefined for a shell it knows nothing of. */
export function completionScript(shell) {
  return shell === 'bash' ? bash() : shell === 'zsh' ? zsh() : shell === 'fish' ? fish() : undefined;
}
