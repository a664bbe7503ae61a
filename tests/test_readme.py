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
