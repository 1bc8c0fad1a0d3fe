"""WebFetch domain rules, parameter rules and subject specifiers."""

from __future__ import annotations

import pytest

from permissions.domains import domain_rule_matches, url_host
from permissions.params import param_rule_matches, parse_param_rule, specifier_matches


@pytest.mark.parametrize(
    ("content", "url", "hit"),
    [
        ("domain:example.com", "https://example.com/a", True),
        ("domain:example.com", "https://EXAMPLE.com./a", True),
        ("domain:Example.COM", "http://example.com:8080/", True),
        ("domain:example.com", "https://api.example.com/", False),
        ("domain:*.example.com", "https://api.example.com/", True),
        ("domain:*.example.com", "https://a.b.c.example.com/", True),
        ("domain:*.example.com", "https://example.com/", False),  # not the apex
        ("domain:*.example.com", "https://badexample.com/", False),
        ("domain:api.*.com", "https://api.foo.com/", True),
        ("domain:api.*.com", "https://api.foo.bar.com/", False),  # one label only
        ("domain:*", "https://anything.test/", True),
        ("domain:example.com", "https://example.com.evil.test/", False),
        ("domain:example.com", "https://user@example.com@evil.test/", False),
        ("domain:example.com", "not a url", False),
        (None, "https://x.test/", True),
        ("https://docs.x.test/*", "https://docs.x.test/a/b", True),
    ],
)
def test_domain_rules(content: str | None, url: str, hit: bool) -> None:
    assert domain_rule_matches(content, url) is hit


def test_url_host() -> None:
    assert url_host("https://Sub.Example.COM:443/p?q") == "sub.example.com"
    assert url_host("mailto:x") is None


@pytest.mark.parametrize(
    ("content", "inp", "hit"),
    [
        ("model:opus", {"model": "opus"}, True),
        ("model:opus*", {"model": "opus-4.5"}, True),
        ("model:opus", {"model": "sonnet"}, False),
        ("model:opus", {}, False),
        ("run_in_background:true", {"run_in_background": True}, True),
        ("run_in_background:true", {"run_in_background": False}, False),
        ("timeout:*", {"timeout": 600000}, True),
        ("items:*", {"items": [1, 2]}, False),  # not a scalar
        ("command:rm*", {"command": "rm -rf /"}, False),  # primary field: never a parameter
    ],
)
def test_param_rules(content: str, inp: dict[str, object], hit: bool) -> None:
    p = parse_param_rule(content)
    assert p is not None
    assert param_rule_matches(p, inp) is hit


def test_parse_param_rule_shapes() -> None:
    assert parse_param_rule("npm run test") is None
    assert parse_param_rule(None) is None
    p = parse_param_rule("model:a:b")
    assert p is not None and (p.name, p.value) == ("model", "a:b")


def test_specifiers() -> None:
    assert specifier_matches("Agent", "Explore", {"subagent_type": "Explore"})
    assert not specifier_matches("Agent", "Explore", {"subagent_type": "Plan"})
    assert specifier_matches("Skill", "pdf", {"skill": "pdf"})
    assert not specifier_matches("Skill", "pdf", {"skill": "pdf", "args": "x.pdf"})
    assert specifier_matches("Skill", "pdf *", {"skill": "pdf", "args": "x.pdf"})
    assert specifier_matches("Skill", "pdf *", {"skill": "pdf"})
    assert not specifier_matches("Skill", "pdf *", {"skill": "pdfx"})
    assert not specifier_matches("WebSearch", "x", {"query": "x"})
