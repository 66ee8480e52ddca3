"""Real comments per format (agentguard/comments.py): where an inline suppression may stand."""

from __future__ import annotations

import pytest

from agentguard.comments import comments

MARK = "agentguard: ignore[AG305]"


@pytest.mark.parametrize(
    ("name", "text", "want"),
    [
        ("a.py", f'x = "# {MARK}"  # {MARK}\n', {1: False}),
        ("a.py", f'"""\n# {MARK}\n"""\ns = """# {MARK}"""\n', {}),
        ("a.py", f"# {MARK}\nx = 1\n", {1: True}),
        ("c.yml", f"a: \"# {MARK}\"\nb: |\n  # {MARK}\nc: '# {MARK}'\n", {}),
        ("c.yaml", f"a: b  # {MARK}\n# {MARK}\nc: d#agentguard-ignore\n", {1: False, 2: True}),
        ("c.toml", f'a = "# {MARK}"\nb = """\n# {MARK}\n"""\nc = \'#\' # {MARK}\n', {5: False}),
        ("s.json", f'{{"a": "// {MARK}", "b": "/* {MARK} */"}}\n', {}),
        ("s.json", f'{{"a": 1, // {MARK}\n/* {MARK} */ "b": 2}}\n', {1: False, 2: True}),
        ("a.ts", f'const s = "// {MARK}"; const t = `// {MARK}`; // {MARK}\n', {1: False}),
        ("a.js", f"/*\n {MARK}\n*/\nx()\n", {2: True}),
        ("Dockerfile", f'RUN echo "# {MARK}" # {MARK}\n# {MARK}\n', {2: True}),
        ("notes.md", f"text # {MARK}\n# {MARK}\n", {2: True}),
        ("broken.py", f'x = (\n# {MARK}\n"""unterminated\n', {}),
    ],
)
def test_only_real_comments_are_found(name: str, text: str, want: dict[int, bool]) -> None:
    found = {n: c.whole_line for n, c in comments(name, text).items() if "agentguard" in c.text}
    assert found == want
