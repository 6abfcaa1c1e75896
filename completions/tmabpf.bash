# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# bash completion for tmabpf: subcommands, the long options each one's --help lists (so the
# completion follows the binary), and the values of options that take a known set.
_tmabpf()
{
	local cur prev sub subs i exe=${COMP_WORDS[0]}
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	sub=
	# the subcommands: the usage line "tmabpf daemon | analyze | ... [OPTIONS]" of --help
	subs=$("$exe" --help 2>/dev/null | sed -n 's/^ *tmabpf \([a-z]\+\( | [a-z]\+\)*\) \[OPTIONS\].*/\1/p' | tr -d '|')
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--)	# the command to profile: complete it as a command line of its own
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			else
				COMPREPLY=($(compgen -c -- "$cur"))
			fi
			return;;
		*) [[ $i == 1 && " $subs " == *" ${COMP_WORDS[i]} "* ]] && sub=${COMP_WORDS[i]};;
		esac
	done
	case $prev in
	-p|--pid) COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")); return;;
	-t|--tid) COMPREPLY=($(compgen -W "$(ps -eLo lwp= 2>/dev/null)" -- "$cur")); return;;
	--cpu) COMPREPLY=($(compgen -W "$("$exe" list 2>/dev/null | awk '/^recipes: /{r=1; sub(/^recipes: /, ""); print; next}
		r && /^  /{print; next} {r=0}' | tr -d ,)" -- "$cur")); return;;	# (its wrapped lines too)
	--accounting) COMPREPLY=($(compgen -W "auto tasks sampled switch" -- "$cur")); return;;
	--smt) COMPREPLY=($(compgen -W "on off" -- "$cur")); return;;
	--probe-at) COMPREPLY=($(compgen -W "auto symbol" -- "$cur")); return;;
	--core-wide) COMPREPLY=($(compgen -W "yes no" -- "$cur")); return;;
	--json|--trace|--folded|--pprof|--jsonl|--config) [[ $sub == analyze && $prev == --json ]] ||
		{ COMPREPLY=($(compgen -f -- "$cur")); return; };;
	-d|--duration|-I|--interval|-e|--event|--uprobe|--per-call|--spin|--top|--max-*|--min-*|--top-*|--listen|-l|--serve|\
	--expire|--sample-hz|--events-hz|--max-rate|--fail-on) return;;
	esac
	case $cur in
	--mem-samples=*) COMPREPLY=($(compgen -P --mem-samples= -W "pmu page-faults" -- "${cur#*=}")); return;;
	-*)
		COMPREPLY=($(compgen -W "$("$exe" $sub --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)" \
			-- "$cur"))
		return;;
	esac
	case $sub in
	"") [[ $COMP_CWORD == 1 ]] && COMPREPLY=($(compgen -W "$subs" -- "$cur"));;
	analyze) COMPREPLY=($(compgen -f -X '!*.csv' -- "$cur") $(compgen -d -- "$cur"));;
	diff) COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"));;
	esac
}
complete -F _tmabpf tmabpf
