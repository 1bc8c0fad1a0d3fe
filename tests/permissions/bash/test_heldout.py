"""Our own held-out style corpus, scored exactly like the public one.

``tests/data/bash-permissions-heldout.jsonl`` has the same format and categories as the public
corpus, with new cases (each with its reasoning in ``note``): 0 unsafe allows, every deny
denied, >= 95% allow recall.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.permissions.bash.test_corpus import CASES as PUBLIC_CASES
from tests.permissions.bash.test_corpus import _decide, _ok, assert_scores

CORPUS = Path(__file__).resolve().parents[2] / "data" / "bash-permissions-heldout.jsonl"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()
]


def test_heldout_covers_every_public_category() -> None:
    counts = Counter(c["category"] for c in CASES)
    public = {c["category"] for c in PUBLIC_CASES}
    assert len(CASES) >= 250
    assert {cat for cat in public if counts[cat] < 5} == set(), counts
    assert len({c["id"] for c in CASES}) == len(CASES)
    public_commands = {c["command"] for c in PUBLIC_CASES}
    assert not [c["id"] for c in CASES if c["command"] in public_commands]


def test_heldout_score(tmp_path: Path) -> None:
    assert_scores(CASES, tmp_path)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_heldout_case(case: dict[str, Any], tmp_path: Path) -> None:
    decision, reason = _decide(case, tmp_path)
    assert _ok(case["expected"], decision), (
        f"{case['id']} [{case['category']}] {case['command'][:200]!r}: expected "
        f"{case['expected']}, got {decision.label} ({reason}); note: {case.get('note')}"
    )
