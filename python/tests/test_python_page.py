"""The Python page's snippet (docs/python.md, which the README links) runs as written (on the
default model)."""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_python_page_snippet_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert blocks, "docs/python.md has no python snippet"
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), {})
    out = capsys.readouterr().out
    assert "5433" in out and "outside 1..=5" in out
