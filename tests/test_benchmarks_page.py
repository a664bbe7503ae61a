"""The benchmarks page is rendered from the benches' JSON results, never edited by hand."""
from __future__ import annotations

import json

from bench.benchmarks_page import PAGE, README, RESULTS, SECTIONS, page, readme


def test_the_page_and_the_readme_are_what_the_results_give():
    assert PAGE.read_text() == page(), "docs/benchmarks.md is out of date: run python bench/benchmarks_page.py"
    assert README.read_text() == readme(), "the README's peer figures are out of date: run python bench/benchmarks_page.py"


def test_every_result_says_where_and_when_it_was_measured():
    for name in SECTIONS:
        result = json.loads((RESULTS / name).read_text())
        run = result["run"]
        for key in ("started", "finished", "cpu", "cores", "load", "versions", "commit"):
            assert run[key] not in (None, "", []), f"{name}: run[{key!r}] is empty"
        assert "casadi" in run["versions"] and "pin" in run["versions"]
        assert f"Measured {run['started']}" in page()
