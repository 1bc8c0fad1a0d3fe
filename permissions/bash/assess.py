"""The decision for one bash command under the Bash rules of a context.

Order (strictest first): a deny rule matching any simple command anywhere -> DENY; an ask rule
-> ASK; a safety check (critical rm, protected path, /dev/tcp) -> ASK; anything the analysis
cannot model -> ASK (ANALYSIS); every command read-only or allowed by a rule -> ALLOW;
otherwise ASK (MODE, "needs permission") with "don't ask again" suggestions.

``_assess`` runs these as the phases of a ``_Judge``: the deny rules, the walk over every
command (paths, writes, git; Read/Edit path rules judged there decide right after the deny
rules, a path's deny before the ask rules and its ask after them), then ``_AFTER_WALK`` in order
and ``needs_permission``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
    """The phases in order (see the module docstring): the first verdict stands."""
    judge = _Judge(command, ctx)
    denied = judge.rule_phase(judge.deny_rules, Decision.DENY)
    if denied is not None:
        return denied
    walked = judge.walk()
    for phase in _AFTER_WALK:
        found = phase(judge, walked)
        if found is not None:
            return found
    return judge.needs_permission(walked)


def _script_problems(command: str, script: ParsedScript) -> list[str]:
    """What makes ``command`` unsafe to analyse as a whole, before any of its commands."""
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
    return problems


@dataclass(slots=True)
class _Forms:
    """What deny and ask rules are tried against: the forms of each command (``per_command``,
    with their ``texts``), of all commands at once (one match rejects them all), and of what
    the fallback scan finds in a command the parser could not fully model (``extra``)."""

    per_command: list[list[list[str]]]
    texts: list[list[str]]
    every_form: list[list[str]]
    every_text: list[str]
    extra: list[list[str]]

    @classmethod
    def of(cls, command: str, facts: list[CommandFacts], checks: bool, doubtful: bool) -> _Forms:
        """The forms of ``facts`` (none unless ``checks``: no deny or ask rule to try)."""
        per_command = [deny_forms_of_command(f.cmd) if checks else [] for f in facts]
        out = cls(per_command, [], [], [], [])
        for fm in per_command:
            ts = [" ".join(a) for a in fm]
            out.texts.append(ts)
            out.every_form.extend(fm)
            out.every_text.extend(ts)
        if checks and (doubtful or "\xa0" in command):
            out.extra = deny_forms_of_argvs(scan_segments(command))
            # what the model wrote inside quotes may still run (`echo 'a[$(rm x)]'; echo $((_))`)
            for body in every_body(command):
                deny_forms_of_script(body, 1, out.extra)
        return out

    def match(self, rules: RuleMatcher[PermissionRule]) -> tuple[int | None, PermissionRule] | None:
        """The first command (its index) a rule matches and the first rule matching it; else
        a rule matching what the fallback scan found (index None)."""
        hit = _first_match(rules, self.per_command, self.texts, self.every_form, self.every_text)
        if hit is not None:
            return hit
        rule = rules.first(self.extra)
        return None if rule is None else (None, rule)


@dataclass(slots=True)
class _Walked:
    """What the walk over every command found: the write and git state, the paths judged, the
    rules allowing commands, the commands needing permission."""

    state: WalkState
    paths: PathWalk
    used_rules: list[PermissionRule] = field(default_factory=list)
    needing: list[CommandFacts] = field(default_factory=list)
    network: bool = False
    all_read_only: bool = True


class _Judge:
    """One assessment, phase by phase: each phase returns the assessment, or None to go on."""

    __slots__ = (
        "allow_rules",
        "ask_rules",
        "command",
        "ctx",
        "deny_rules",
        "facts",
        "forms",
        "judgements",
        "problems",
        "script",
    )

    def __init__(self, command: str, ctx: PermissionContext) -> None:
        self.command = command
        self.ctx = ctx
        self.deny_rules, self.ask_rules, self.allow_rules = _matchers(ctx)
        self.script: ParsedScript = parse_simple_commands(command)
        self.problems = _script_problems(command, self.script)
        self.facts = [analyse_command(c, self.script) for c in self.script.commands]
        self.judgements: list[str] = ["" for _ in self.facts]
        checks = bool(self.deny_rules or self.ask_rules)
        self.forms = _Forms.of(command, self.facts, checks, bool(self.problems))

    def finish(self, verdict: Verdict, ro: bool = False, ae: bool = False) -> BashAssessment:
        """The assessment: ``verdict`` with the judgement of every command as its trace."""
        subs: list[SubcommandTrace] = []
        trace: list[str] = []
        for f, j in zip(self.facts, self.judgements, strict=False):
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

    def rule_phase(
        self, rules: RuleMatcher[PermissionRule], decision: Decision
    ) -> BashAssessment | None:
        """DENY (deny rules) or ASK (ask rules) when one matches any command."""
        hit = self.forms.match(rules)
        if hit is None:
            return None
        i, rule = hit
        if decision is Decision.DENY:
            judgement, reason = f"denied by {rule.value}", f"denied by rule {rule.value}"
        else:
            judgement = f"ask rule {rule.value}"
            reason = f"ask rule {rule.value} requires confirmation"
        if i is not None:
            self.judgements[i] = judgement
        return self.finish(Verdict(decision, reason, ReasonKind.RULE, rule))

    def walk(self) -> _Walked:
        """Judge every command in order: its paths, writes, git state and allow rules."""
        state = WalkState(self.ctx)
        state.git_env.extend(self.script.loop_variables)  # `for HOME in ./d; do git log; done`
        walked = _Walked(state, PathWalk(self.ctx, self.command))
        paths = walked.paths
        for i, f in enumerate(self.facts):
            self.problems.extend(f.problems)
            walked.network |= f.network
            written, modelled = write_words(f)
            targets = state.write_targets(f, written, modelled)
            state.check_git_after_cd(f)
            seen = len(paths.outside)
            judgement = self._judgement(f, paths.visit(f, written), targets, walked)
            if len(paths.outside) > seen:
                judgement += f" ({paths.outside[seen][0]} is outside the working directories)"
            self.judgements[i] = judgement
            if not (f.read_only and not f.writes):
                walked.all_read_only = False
            state.track_cd(f)
        return walked

    def _judgement(
        self,
        f: CommandFacts,
        edit_rule: PermissionRule | None,
        targets: list[str | None],
        walked: _Walked,
    ) -> str:
        """How one command is judged: read-only, allowed by a rule (Bash, or Edit for what it
        writes), or needing permission (noted in ``walked``)."""
        allow_rules = self.allow_rules
        if f.read_only and not f.writes:
            return "read-only"
        if (
            not f.writes
            and not f.problems
            and (allowed := allow_rules.first_of((), f.allow_forms, False)) is not None
        ):
            walked.used_rules.append(allowed)
            return f"allowed by {allowed.value}"
        if edit_rule is not None and _allowed_apart_from_writes(f, allow_rules):
            walked.used_rules.append(edit_rule)
            return f"writes allowed by {edit_rule.value}"
        walked.needing.append(f)
        if not walked.state.edits_ok(f, targets):
            walked.state.accept_ok = False
        return "needs permission" + (" (writes)" if f.writes else "")

    def _read_only(self, walked: _Walked) -> bool:
        """Every command read-only, and nothing the analysis doubts or a safety check asks."""
        return walked.all_read_only and not self.problems and not walked.state.safety

    def path_deny(self, walked: _Walked) -> BashAssessment | None:
        """DENY for a path a Read/Edit deny rule covers."""
        return None if walked.paths.deny is None else self.finish(walked.paths.deny)

    def asked(self, walked: _Walked) -> BashAssessment | None:
        """ASK when an ask rule matches any command."""
        return self.rule_phase(self.ask_rules, Decision.ASK)

    def path_ask(self, walked: _Walked) -> BashAssessment | None:
        """ASK for a path a Read/Edit ask rule covers (or a Read deny rule may reach)."""
        if walked.paths.ask is None:
            return None
        # a read-only `grep -r` over a folder a Read rule may cover asks in plan mode too
        return self.finish(walked.paths.ask, self._read_only(walked))

    def safety(self, walked: _Walked) -> BashAssessment | None:
        """ASK (SAFETY) for the first safety check, one a classifier may not approve first."""
        state = walked.state
        if walked.network:
            state.safety.append(SafetyCheck("uses a /dev/tcp or /dev/udp network redirect"))
        if not state.safety:
            return None
        critical = [s for s in state.safety if not s.classifier_approvable]
        s = critical[0] if critical else state.safety[0]
        return self.finish(Verdict(Decision.ASK, s.message, ReasonKind.SAFETY, safety=s))

    def unanalysable(self, walked: _Walked) -> BashAssessment | None:
        """ASK (ANALYSIS) for the first thing the analysis could not model."""
        if not self.problems and not walked.paths.doubts:
            return None
        read_only = self._read_only(walked)  # the doubts about paths aside
        self.problems.extend(walked.paths.doubts)
        return self.finish(
            Verdict(
                Decision.ASK, "cannot analyse safely: " + self.problems[0], ReasonKind.ANALYSIS
            ),
            read_only,
        )

    def allowed(self, walked: _Walked) -> BashAssessment | None:
        """ALLOW when every command is read-only or allowed, and nothing is outside."""
        if walked.needing or walked.paths.outside:
            return None
        read_only = self._read_only(walked)
        if walked.used_rules:
            rule = walked.used_rules[0]
            v = Verdict(Decision.ALLOW, f"allowed by rule {rule.value}", ReasonKind.RULE, rule)
            return self.finish(v, read_only, True)
        if walked.paths.read_rules:
            r = walked.paths.read_rules[0]
            v = Verdict(
                Decision.ALLOW,
                f"read-only command; {r.value} covers what it reads "
                "outside the working directories",
                ReasonKind.RULE,
                r,
            )
            return self.finish(v, read_only, True)
        v = Verdict(Decision.ALLOW, "read-only command", ReasonKind.READ_ONLY)
        return self.finish(v, read_only, True)

    def needs_permission(self, walked: _Walked) -> BashAssessment:
        """ASK (WORKING_DIR) for a path outside, else ASK (MODE) with "don't ask again"
        suggestions: the mode decides."""
        needing, paths = walked.needing, walked.paths
        suggestions: list[RuleValue] = []
        if not any(f.no_suggest or f.core is None or f.writes for f in needing):
            for f in needing:
                sug = _suggestion(f.core or [])
                if sug is not None and sug not in suggestions:
                    suggestions.append(sug)
        where = paths.outside_verdict(tuple(suggestions))
        if where is not None:
            return self.finish(where, self._read_only(walked), False)
        state = walked.state
        accept_ok = state.accept_ok and not self.problems and not state.safety and not paths.outside
        reason = f"{needing[0].cmd.text.strip()[:80]!r} needs permission"
        v = Verdict(
            Decision.ASK, reason, ReasonKind.MODE, suggestions=tuple(suggestions[:MAX_SUGGESTIONS])
        )
        return self.finish(v, False, accept_ok)


# The phases after the walk, strictest first; ``_Judge.needs_permission`` when none decides.
_AFTER_WALK: tuple[Callable[[_Judge, _Walked], BashAssessment | None], ...] = (
    _Judge.path_deny,
    _Judge.asked,
    _Judge.path_ask,
    _Judge.safety,
    _Judge.unanalysable,
    _Judge.allowed,
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
