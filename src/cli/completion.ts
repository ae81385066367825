// `virtualcluster completion bash|zsh`: a completion script generated from the command tree itself (subcommands,
// aliases, options, option values and argument choices), so it never falls behind the commands. Zsh reuses the bash
// function through bashcompinit.

import { Argument, Command } from "commander";
import { COMMON_RESOURCES } from "./resource-aliases.ts";

/**
 * Words for a command's first argument that commander's own choices cannot express. `platform get` accepts every
 * resource the platform lists; the script is generated without asking it, so it offers the common ones.
 */
const ARGUMENT_WORDS: Record<string, readonly string[]> = {
  "/platform/get": COMMON_RESOURCES,
};

interface Node {
  path: string;
  command: Command;
}

function walk(command: Command, path = ""): Node[] {
  const nodes: Node[] = [{ path, command }];
  for (const sub of command.commands) nodes.push(...walk(sub, `${path}/${sub.name()}`));
  return nodes;
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
const isHidden = (command: Command) => (command as unknown as { _hidden?: boolean })._hidden === true;

function optionNames(command: Command): string[] {
  const names = command.options.filter((o) => !o.hidden).flatMap((o) => [o.short, o.long].filter(Boolean) as string[]);
  return [...names, "--help"];
}

/** The bash completion script for a program. */
export function bashCompletion(program: Command): string {
  const fn = `_${program.name().replace(/[^A-Za-z0-9_]/g, "_")}_completion`;
  const nodes = walk(program);
  const next: string[] = [];
  const words: string[] = [];
  const values: string[] = [];
  for (const { path, command } of nodes) {
    const subs = command.commands.filter((c) => !isHidden(c));
    for (const sub of command.commands) {
      for (const name of [sub.name(), ...sub.aliases()])
        next.push(`    ${quote(`${path} ${name}`)}) echo ${quote(`${path}/${sub.name()}`)} ;;`);
    }
    const first = command.registeredArguments[0] as Argument | undefined;
    const choices = ARGUMENT_WORDS[path] ?? first?.argChoices ?? [];
    words.push(
      `    ${quote(path)}) sub=${quote(subs.map((c) => c.name()).join(" "))}; opts=${quote(optionNames(command).join(" "))}; args=${quote(choices.join(" "))} ;;`,
    );
    for (const option of command.options) {
      if (!option.required && !option.optional) continue;
      const result = option.argChoices?.join(" ") ?? "__file";
      for (const flag of [option.short, option.long].filter(Boolean)) {
        values.push(`    ${quote(`${path} ${flag}`)}) echo ${quote(result)} ;;`);
      }
    }
  }
  return `# ${program.name()} completion for bash. Load it with: source <(${program.name()} completion bash)
${fn}_next() {
  case "$1 $2" in
${next.join("\n")}
  esac
}
${fn}_values() {
  case "$1 $2" in
${values.join("\n")}
  esac
}
${fn}() {
  local cur prev path word i nargs found sub opts args value
  COMPREPLY=()
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  [ "$COMP_CWORD" -gt 0 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  path=""
  nargs=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in
      -*=*) ;;
      -*) [ -n "$(${fn}_values "$path" "$word")" ] && i=$((i + 1)) ;;
      *)
        found="$(${fn}_next "$path" "$word")"
        if [ -n "$found" ]; then path="$found"; nargs=0; else nargs=$((nargs + 1)); fi ;;
    esac
  done
  case "$prev" in
    -*)
      value="$(${fn}_values "$path" "$prev")"
      if [ "$value" = "__file" ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return 0
      elif [ -n "$value" ]; then
        COMPREPLY=($(compgen -W "$value" -- "$cur"))
        return 0
      fi ;;
  esac
  sub=""; opts=""; args=""
  case "$path" in
${words.join("\n")}
  esac
  [ "$nargs" -gt 0 ] && args=""
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$sub $args" -- "$cur"))
  fi
  return 0
}
complete -o default -F ${fn} ${program.name()}
`;
}

/** Fish quoting: single quotes, with backslash and quote escaped. */
const fishQuote = (text: string) => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

/** The first line of a description, short enough for fish's completion pager. */
const fishDescription = (text: string) =>
  fishQuote(
    text
      .split("\n")[0]
      .replace(/\s+\([^()]*\)$/, "")
      .slice(0, 80),
  );

/**
 * The fish completion script: a helper finds the command path typed so far (the words that name subcommands), and
 * one `complete` line per subcommand, option and argument choice says under which path it applies.
 */
export function fishCompletion(program: Command): string {
  const name = program.name();
  const fn = `__${name.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const nodes = walk(program).filter(({ command }) => !isHidden(command));
  const paths = nodes.map(({ path }) => path.slice(1).replaceAll("/", " ")).filter(Boolean);
  const lines: string[] = [];
  for (const { path, command } of nodes) {
    const at = `-n ${fishQuote(`${fn}_at ${fishQuote(path.slice(1).replaceAll("/", " "))}`)}`;
    for (const sub of command.commands.filter((c) => !isHidden(c))) {
      lines.push(`complete -c ${name} -f ${at} -a ${fishQuote(sub.name())} -d ${fishDescription(sub.description())}`);
    }
    const first = command.registeredArguments[0] as Argument | undefined;
    const choices = ARGUMENT_WORDS[path] ?? first?.argChoices ?? [];
    if (choices.length > 0) lines.push(`complete -c ${name} -f ${at} -a ${fishQuote(choices.join(" "))}`);
    // Files only where a command takes a free argument (e.g. patches apply <object>) or an option value.
    else if (!first) lines.push(`complete -c ${name} -f ${at}`);
    for (const option of command.options.filter((o) => !o.hidden)) {
      const flags = [
        option.long ? `-l ${option.long.replace(/^--/, "")}` : "",
        option.short ? `-s ${option.short.replace(/^-/, "")}` : "",
      ].filter(Boolean);
      const value =
        !option.required && !option.optional
          ? ""
          : option.argChoices
            ? `-x -a ${fishQuote(option.argChoices.join(" "))}`
            : "-r -F";
      lines.push(
        `complete -c ${name} ${at} ${[...flags, value].filter(Boolean).join(" ")} -d ${fishDescription(option.description)}`,
      );
    }
  }
  return `# ${name} completion for fish. Load it with: ${name} completion fish | source
set -g ${fn}_commands ${paths.map(fishQuote).join(" ")}
function ${fn}_path --description 'the ${name} subcommands typed so far'
    set -l path
    for word in (commandline -opc)[2..-1]
        string match -q -- '-*' $word; and continue
        set -l next (string join ' ' $path $word)
        contains -- $next $${fn}_commands; and set path $path $word
    end
    string join ' ' $path
end
function ${fn}_at --description 'whether the typed subcommands are exactly $argv[1]'
    test "$(${fn}_path)" = "$argv[1]"
end
complete -c ${name} -e
${lines.join("\n")}
`;
}

export function zshCompletion(program: Command): string {
  return `#compdef ${program.name()}
# ${program.name()} completion for zsh. Load it with: source <(${program.name()} completion zsh)
(( $+functions[compdef] )) || { autoload -U +X compinit && compinit; }
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program)}`;
}

export function completionCommand(program: () => Command): Command {
  return new Command("completion")
    .description("Print a shell completion script")
    .addArgument(new Argument("<shell>", "shell to complete for").choices(["bash", "zsh", "fish"]))
    .addHelpText(
      "after",
      `
Examples:
  source <(virtualcluster completion bash)                         # this shell
  virtualcluster completion bash > /etc/bash_completion.d/virtualcluster
  echo 'source <(virtualcluster completion zsh)' >> ~/.zshrc
  virtualcluster completion fish > ~/.config/fish/completions/virtualcluster.fish`,
    )
    .action((shell: "bash" | "zsh" | "fish") => {
      const scripts = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion };
      process.stdout.write(scripts[shell](program()));
    });
}
