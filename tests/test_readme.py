"""The README's Python snippet runs as written (docs must not drift from the API)."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_snippet_solves_the_quadrotor(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python snippet"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["solution"].success
    assert "Solve_Succeeded" in capsys.readouterr().out


def test_readme_quadruped_snippet_builds_the_anymal_trot(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    namespace: dict = {}
    exec(compile(blocks[1], "README.md", "exec"), namespace)
    assert namespace["problem"].schedule.foot_names == ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT")
    assert "knees inward" in capsys.readouterr().out
