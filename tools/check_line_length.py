"""Fails when a Rust source line is over 100 columns.

rustfmt wraps code at 100 columns (rustfmt.toml) but leaves long comments and string literals
alone, and ruff checks the Python side (E501); this covers what rustfmt cannot.
"""

import pathlib
import sys

LIMIT = 100


def long_lines(root: pathlib.Path):
    for path in sorted(root.rglob("*.rs")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > LIMIT:
                yield f"{path}:{number}: {len(line)} columns"


def main() -> int:
    repo = pathlib.Path(__file__).resolve().parent.parent
    found = list(long_lines(repo / "crates"))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} Rust lines over {LIMIT} columns", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
