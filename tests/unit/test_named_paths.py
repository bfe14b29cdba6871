"""Every file path the code names in its docstrings, comments and messages (`cli/terminal.py`,
`docs/studies.md`) exists: a file that moves takes the paths that name it along."""

from __future__ import annotations

import io
import re
import tokenize

from tests.conftest import REPO_ROOT

# A path with at least one folder and a file extension; placeholders in capitals (STUDY/state.json) are not paths.
NAMED_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md|yaml|yml|sh|j2|txt|toml|json|html))\b")
TEXT = {tokenize.COMMENT, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def named_paths(source: str):
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in TEXT:
            for path in NAMED_PATH.findall(token.string):
                if not any(part.isupper() for part in path.split("/")[:-1]):
                    yield token.start[0], path


def test_every_path_named_in_the_code_exists():
    """Relative to the repository or to any folder above the naming file (cli/..., simulator/..., modules/...)."""
    missing = []
    for path in sorted((REPO_ROOT / "iotdb_bench").rglob("*.py")):
        bases = [REPO_ROOT / folder for folder in path.relative_to(REPO_ROOT).parents]
        for line, named in named_paths(path.read_text()):
            if not any((base / named).exists() for base in bases):
                missing.append(f"{path.relative_to(REPO_ROOT)}:{line}: {named}")
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)
