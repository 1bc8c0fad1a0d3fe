"""The decision for one bash command under the Bash rules of a context.

Order (strictest first): a deny rule matching any simple command anywhere -> DENY; an ask rule
-> ASK; a safety check (critical rm, protected path, /dev/tcp) -> ASK; anything the analysis
cannot model -> ASK (ANALYSIS); every command read-only or allowed by a rule -> ALLOW;
otherwise ASK (MODE, "needs permission") with "don't ask again" suggestions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from permissions.bash.analysis import (
    CommandFacts,
    analyse_command,
    deny_forms_of_argvs,
    deny_forms_of_command,
    deny_forms_of_script,
    script_prefix,
)
from permissions.bash.effects import WalkState, write_words
from permissions.bash.match import RuleMatcher, compile_pattern
from permissions.bash.parse import ParsedScript, parse_simple_commands
from permissions.bash.pathcheck import PathWalk
from permissions.bash.scan import scan_segments
from permissions.bash.substitutions import every_body
from permissions.bash.types import BashAssessment, SubcommandTrace
from permissions.types import (
    Decision,
    PermissionContext,
    PermissionRule,
    ReasonKind,
    RuleBehavior,
    RuleValue,
    SafetyCheck,
    Verdict,
)

__all__ = ["MAX_COMMAND_CHARS", "assess_bash", "bash_rule_matches", "is_read_only_command"]

MAX_COMMAND_CHARS = 10_000
MAX_SUGGESTIONS = 5
_SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv", "poetry", "make", "gh"}
    | {"brew", "apt", "terraform", "dotnet", "mvn", "gradle", "npx", "pytest", "ruff", "mypy"}
)
# C0 but tab and newline, DEL, C1, lone surrogates, Unicode format characters and separators
# (bidi overrides, zero-width): tools.terminal_text.HIDDEN_CLASS, which the prompt escapes.
_CONTROL_RE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    r"\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    r"\U000e0001\U000e0020-\U000e007f]"
)
# `r\<newline>m`: bash joins the two halves into one word, tree-sitter splits them.
_JOINING_CONTINUATION_RE = re.compile(r"[^\s\\]\\\n\S")
_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun"})
_TEE_FLAGS = frozenset({"-a", "-i", "-p", "--append", "--ignore-interrupts", "--output-error"})

_Matchers = tuple[
    RuleMatcher[PermissionRule], RuleMatcher[PermissionRule], RuleMatcher[PermissionRule]
]
_MATCHERS: dict[int, tuple[tuple[PermissionRule, ...], _Matchers]] = {}


def _compile(
    rules: Sequence[PermissionRule], behavior: RuleBehavior
) -> RuleMatcher[PermissionRule]:
    return RuleMatcher(
        [
            (r, compile_pattern(r.value.content))
            for r in rules
            if r.behavior is behavior and r.value.tool_name == "Bash"
        ]
    )


def _matchers(ctx: PermissionContext) -> _Matchers:
    """Deny, ask and allow matchers of ``ctx``'s Bash rules, compiled once per rules tuple
    (contexts are rebuilt per call, their rules tuple is usually the same object)."""
    rules = ctx.rules
    hit = _MATCHERS.get(id(rules)) if type(rules) is tuple else None
    if hit is not None and hit[0] is rules:
        return hit[1]
    out = (
        _compile(rules, RuleBehavior.DENY),
        _compile(rules, RuleBehavior.ASK),
        _compile(rules, RuleBehavior.ALLOW),
    )
    if type(rules) is tuple:
        if len(_MATCHERS) > 512:
            _MATCHERS.clear()
        _MATCHERS[id(rules)] = (rules, out)
    return out


def _suggestion(core: Sequence[str]) -> RuleValue | None:
    if not core:
        return None
    if (script := script_prefix(core)) is not None:
        return RuleValue("Bash", " ".join(script) + " *")
    prog = core[0]
    take = 1
    if prog in _RUNNERS and len(core) > 2 and core[1] in ("run", "run-script"):
        take = 3
    elif (prog in _SUBCOMMAND_PROGRAMS or prog in _RUNNERS) and len(core) > 1:
        take = 2
    words = list(core[:take])
    if take > 1 and words[1].startswith("-"):
        return None  # `git -c x=y log`: no prefix would be both useful and safe
    while len(words) > 1 and (words[-1].startswith("-") or "/" in words[-1]):
        words.pop()
    return RuleValue("Bash", " ".join(words) + " *")


def _assess(command: str, ctx: PermissionContext) -> BashAssessment:
    deny_rules, ask_rules, allow_rules = _matchers(ctx)
    script: ParsedScript = parse_simple_commands(command)
    problems: list[str] = []
    if script.has_error:
        problems.append("the command could not be parsed completely")
    problems.extend(script.problems)
    if len(command) > MAX_COMMAND_CHARS:
        problems.append(f"the command is longer than {MAX_COMMAND_CHARS:,} characters")
    if _CONTROL_RE.search(command):
        problems.append("the command contains control characters or invisible Unicode characters")
    if "\\\n" in command and _JOINING_CONTINUATION_RE.search(command):
        problems.append("a line continuation joins two parts of one word")

    facts = [analyse_command(c, script) for c in script.commands]
    checks = bool(deny_rules or ask_rules)
    forms = [deny_forms_of_command(f.cmd) if checks else [] for f in facts]
    texts: list[list[str]] = []
    every_form: list[list[str]] = []  # of all commands: one match rejects them all at once
    every_text: list[str] = []
    for fm in forms:
        ts = [" ".join(a) for a in fm]
        texts.append(ts)
        every_form.extend(fm)
        every_text.extend(ts)
    extra: list[list[str]] = []
    if checks and (problems or "\xa0" in command):
        extra = deny_forms_of_argvs(scan_segments(command))
        # what the model wrote inside quotes may still run (`echo 'a[$(rm x)]'; echo $((_))`)
        for body in every_body(command):
            deny_forms_of_script(body, 1, extra)

    def finish(verdict: Verdict, ro: bool = False, ae: bool = False) -> BashAssessment:
        subs: list[SubcommandTrace] = []
        trace: list[str] = []
        for f, j in zip(facts, judgements, strict=False):
            text = f.cmd.text
            subs.append(SubcommandTrace(text, tuple([w[1] or "" for w in f.cmd.words]), j))
            trace.append(f"{text} -> {j}")
        v = Verdict(
            verdict.decision,
            verdict.reason,
            verdict.kind,
            verdict.rule,
            verdict.safety,
            verdict.suggestions,
            tuple(trace),
        )
        return BashAssessment(v, ro, ae, tuple(subs))

    judgements: list[str] = ["" for _ in facts]
    hit = _first_match(deny_rules, forms, texts, every_form, every_text)
    if hit is not None:
        i, by = hit
        judgements[i] = f"denied by {by.value}"
        return finish(Verdict(Decision.DENY, f"denied by rule {by.value}", ReasonKind.RULE, by))
    rule = deny_rules.first(extra)
    if rule is not None:
        return finish(Verdict(Decision.DENY, f"denied by rule {rule.value}", ReasonKind.RULE, rule))
    state = WalkState(ctx)
    state.git_env.extend(script.loop_variables)  # `for HOME in ./d; do git log; done`
    paths = PathWalk(ctx, command)
    used_rules: list[PermissionRule] = []
    needing: list[CommandFacts] = []
    network = False
    all_read_only = True
    for i, f in enumerate(facts):
        problems.extend(f.problems)
        network |= f.network
        written, modelled = write_words(f)
        targets = state.write_targets(f, written, modelled)
        state.check_git_after_cd(f)
        seen = len(paths.outside)
        edit_rule = paths.visit(f, written)
        if f.read_only and not f.writes:
            judgements[i] = "read-only"
        elif (
            not f.writes
            and not f.problems
            and (allowed := allow_rules.first_of((), f.allow_forms, False)) is not None
        ):
            judgements[i] = f"allowed by {allowed.value}"
            used_rules.append(allowed)
        elif edit_rule is not None and _allowed_apart_from_writes(f, allow_rules):
            judgements[i] = f"writes allowed by {edit_rule.value}"
            used_rules.append(edit_rule)
        else:
            judgements[i] = "needs permission" + (" (writes)" if f.writes else "")
            needing.append(f)
            if not state.edits_ok(f, targets):
                state.accept_ok = False
        if len(paths.outside) > seen:
            judgements[i] += f" ({paths.outside[seen][0]} is outside the working directories)"
        if not (f.read_only and not f.writes):
            all_read_only = False
        state.track_cd(f)
    if paths.deny is not None:
        return finish(paths.deny)
    hit = _first_match(ask_rules, forms, texts, every_form, every_text)
    if hit is not None:
        i, by = hit
        judgements[i] = f"ask rule {by.value}"
        return finish(
            Verdict(Decision.ASK, f"ask rule {by.value} requires confirmation", ReasonKind.RULE, by)
        )
    rule = ask_rules.first(extra)
    if rule is not None:
        return finish(
            Verdict(
                Decision.ASK, f"ask rule {rule.value} requires confirmation", ReasonKind.RULE, rule
            )
        )
    if paths.ask is not None:
        # a read-only `grep -r` over a folder a Read rule may cover asks in plan mode too
        return finish(paths.ask, all_read_only and not problems and not state.safety)
    if network:
        state.safety.append(SafetyCheck("uses a /dev/tcp or /dev/udp network redirect"))
    outside = bool(paths.outside)
    accept_ok = state.accept_ok and not problems and not state.safety and not outside
    read_only = all_read_only and not problems and not state.safety

    critical = [s for s in state.safety if not s.classifier_approvable]
    if critical:
        return finish(
            Verdict(Decision.ASK, critical[0].message, ReasonKind.SAFETY, safety=critical[0])
        )
    if state.safety:
        s = state.safety[0]
        return finish(Verdict(Decision.ASK, s.message, ReasonKind.SAFETY, safety=s))
    problems.extend(paths.doubts)
    if problems:
        return finish(
            Verdict(Decision.ASK, "cannot analyse safely: " + problems[0], ReasonKind.ANALYSIS),
            read_only,
        )
    if not needing and not outside:
        if used_rules:
            return finish(
                Verdict(
                    Decision.ALLOW,
                    f"allowed by rule {used_rules[0].value}",
                    ReasonKind.RULE,
                    used_rules[0],
                ),
                read_only,
                True,
            )
        if paths.read_rules:
            r = paths.read_rules[0]
            return finish(
                Verdict(
                    Decision.ALLOW,
                    f"read-only command; {r.value} covers what it reads "
                    "outside the working directories",
                    ReasonKind.RULE,
                    r,
                ),
                read_only,
                True,
            )
        return finish(
            Verdict(Decision.ALLOW, "read-only command", ReasonKind.READ_ONLY), read_only, True
        )
    suggestions: list[RuleValue] = []
    if not any(f.no_suggest or f.core is None or f.writes for f in needing):
        for f in needing:
            sug = _suggestion(f.core or [])
            if sug is not None and sug not in suggestions:
                suggestions.append(sug)
    where = paths.outside_verdict(tuple(suggestions))
    if where is not None:
        return finish(where, read_only, False)
    first = needing[0]
    reason = f"{first.cmd.text.strip()[:80]!r} needs permission"
    return finish(
        Verdict(
            Decision.ASK, reason, ReasonKind.MODE, suggestions=tuple(suggestions[:MAX_SUGGESTIONS])
        ),
        False,
        accept_ok,
    )


def _first_match(
    rules: RuleMatcher[PermissionRule],
    forms: list[list[list[str]]],
    texts: list[list[str]],
    every_form: list[list[str]],
    every_text: list[str],
) -> tuple[int, PermissionRule] | None:
    """The first command (in order) a rule matches, and the first rule matching it. One match
    over the forms of every command first: it says whether any command matches at all."""
    if not rules or rules.first_of(every_form, every_text) is None:
        return None
    for i, fm in enumerate(forms):
        rule = rules.first_of(fm, texts[i])
        if rule is not None:
            return i, rule
    return None


def _allowed_apart_from_writes(f: CommandFacts, allow_rules: RuleMatcher[PermissionRule]) -> bool:
    """Would ``f`` be read-only or allowed by a Bash rule, but for the files it writes?
    (``echo hi > notes/x.txt``, ``tee notes/x.txt``: an Edit allow rule may cover the write.)"""
    core = f.core
    if core is None or f.problems or f.via_xargs or not f.known:
        return False
    if core[0] == "tee":
        return all(a in _TEE_FLAGS or not a.startswith("-") for a in core[1:])
    if f.reads_only:
        return True
    return allow_rules.first_of((), f.allow_forms, False) is not None


def assess_bash(command: str, ctx: PermissionContext) -> BashAssessment:
    """Judge ``command`` under the Bash rules of ``ctx`` (the mode is applied by the engine)."""
    try:
        return _assess(command, ctx)
    except RecursionError:
        return BashAssessment(
            Verdict(
                Decision.ASK, "the command is nested too deeply to analyse", ReasonKind.ANALYSIS
            ),
            False,
            False,
        )


def is_read_only_command(command: str, cwd: Path | None = None) -> bool:
    """True only when the analysis is confident ``command`` neither writes nor runs code."""
    ctx = PermissionContext(cwd=cwd) if cwd is not None else PermissionContext()
    return assess_bash(command, ctx).read_only


def bash_rule_matches(content: str | None, command: str) -> bool:
    """Does ``Bash(content)`` match any simple command of ``command``? Unparseable: True."""
    script = parse_simple_commands(command)
    if script.has_error:
        return True
    pat = compile_pattern(content)
    for c in script.commands:
        for argv in deny_forms_of_command(c):
            if pat.matches(" ".join(argv)) or pat.matches_flags(argv):
                return True
    return False
