"""Generates the script table of tokenmill's UnicodeScripts pre-tokenizer from `tokenizers`.

    python tools/gen_unicode_scripts_table.py        # needs tokenizers, regex and cargo

Writes ``crates/tokenmill-core/src/pre_tokenizers/unicode_scripts/table.rs``.

Why a table of our own: ``tokenizers.pre_tokenizers.UnicodeScripts`` does not use a current
Unicode database but a table generated once (2020) by SentencePiece's
``gen_unicode_scripts_code.pl`` from Unicode 9.0's Scripts.txt (its scripts stop at the 9.0
additions Adlam ... Tangut), and every code point outside it is "Any" (never cuts). Chars
assigned since 9.0, and the few chars whose script Unicode changed since (U+0589 ARMENIAN FULL
STOP was Common, ...), split differently with a current table such as the ``unicode-script``
crate's. Being a drop-in replacement, we split exactly as tokenizers does, for every code point.

How: the table is read off tokenizers' behaviour (its script table is not exposed), for all
code points 0..=0x10FFFF except surrogates:

1. "Any" chars: in "a" + c, c starts a piece unless it is Latin or Any; in "0" + c, unless it
   is Common or Any. A char that starts a piece in neither is Any.
2. The other chars, concatenated in code point order: a piece starts wherever the script
   changes, which gives runs of one script.
3. Runs are grouped into scripts: the first char of a run, placed after a representative of a
   known script, starts no piece exactly when it has that script. That also folds in
   tokenizers' fixups (Hiragana, Katakana and U+30FC count as Han; the space is Any).
4. Each script is named by the `unicode-script` crate's ``Script`` variant that most of its
   chars have in the ``regex`` module's (current) Unicode data; the names must be distinct.

Consecutive code points of one script become one range; code points in no range are Any.
The output is deterministic. Re-run it if tokenizers ever changes its table, then run
tests/test_pre_tokenizers.py::test_unicode_scripts_on_every_code_point.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys

import regex
import tokenizers
from tokenizers.pre_tokenizers import UnicodeScripts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(
    ROOT, "crates", "tokenmill-core", "src", "pre_tokenizers", "unicode_scripts", "table.rs"
)

PRE = UnicodeScripts()
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def piece_starts(text: str) -> set[int]:
    return {start for _, (start, _) in PRE.pre_tokenize_str(text)}


def any_code_points() -> set[int]:
    """Step 1: the code points tokenizers gives no script (they never start a piece)."""

    def cut_after(prefix: str) -> list[bool]:
        starts = piece_starts("".join(prefix + chr(c) for c in CODE_POINTS))
        return [2 * i + 1 in starts for i in range(len(CODE_POINTS))]

    after_latin, after_common = cut_after("a"), cut_after("0")
    return {c for c, x, y in zip(CODE_POINTS, after_latin, after_common) if not x and not y}


def script_runs(with_script: list[int]) -> list[list[int]]:
    """Step 2: maximal runs of one script among the given code points, in order."""
    starts = piece_starts("".join(chr(c) for c in with_script))
    runs: list[list[int]] = []
    for i, c in enumerate(with_script):
        if i in starts or not runs:
            runs.append([])
        runs[-1].append(c)
    return runs


def group_runs(runs: list[list[int]]) -> list[list[int]]:
    """Step 3: runs of the same script joined; scripts in order of first appearance."""
    groups: list[list[int]] = []
    for run in runs:
        first = chr(run[0])
        probe = "".join(chr(group[0]) + first for group in groups)
        starts = piece_starts(probe)
        same = [k for k in range(len(groups)) if 2 * k + 1 not in starts]
        assert len(same) <= 1, f"U+{run[0]:04X} has two scripts"
        if same:
            groups[same[0]].extend(run)
        else:
            groups.append(list(run))
    return groups


def crate_script_names() -> list[str]:
    """The variants of `unicode_script::Script` in the crate version Cargo.lock selects."""
    command = ["cargo", "metadata", "--format-version", "1", "--locked"]
    meta = json.loads(subprocess.check_output(command, cwd=ROOT))
    manifest = next(p["manifest_path"] for p in meta["packages"] if p["name"] == "unicode-script")
    with open(os.path.join(os.path.dirname(manifest), "src", "tables.rs"), encoding="utf-8") as f:
        enum = re.search(r"pub enum Script \{(.*?)\n\}", f.read(), re.DOTALL).group(1)
    return [n for n in re.findall(r"^\s*(\w+) = ", enum, re.MULTILINE) if n != "Unknown"]


def name_groups(groups: list[list[int]]) -> list[str]:
    """Step 4: the crate's name of the script most chars of each group have today."""
    group_of = {c: k for k, group in enumerate(groups) for c in group}
    text = "".join(chr(c) for c in sorted(group_of))
    votes = [collections.Counter() for _ in groups]
    for name in crate_script_names():
        try:
            pattern = regex.compile(rf"\p{{Script={name}}}")
        except regex.error:
            continue  # a script newer than the regex module's Unicode data: not in 9.0 either
        for m in pattern.finditer(text):
            votes[group_of[ord(m.group())]][name] += 1
    names = [v.most_common(1)[0][0] for v in votes]
    assert len(set(names)) == len(names), "two scripts got the same name"
    return names


def main() -> None:
    no_script = any_code_points()
    runs = script_runs([c for c in CODE_POINTS if c not in no_script])
    groups = group_runs(runs)
    names = name_groups(groups)
    script_of = {c: name for group, name in zip(groups, names) for c in group}
    ranges: list[list] = []
    for c in sorted(script_of):
        if ranges and ranges[-1][1] == c - 1 and ranges[-1][2] == script_of[c]:
            ranges[-1][1] = c
        else:
            ranges.append([c, c, script_of[c]])
    lines = [
        (
            "// @generated by tools/gen_unicode_scripts_table.py from the behaviour of tokenizers"
            f" {tokenizers.__version__}:"
        ),
        "// its Unicode 9.0 scripts, with its fixups (Hiragana, Katakana and U+30FC are Han; the",
        "// space has no script). Do not edit.",
        "use unicode_script::Script;",
        "",
        "/// Sorted, disjoint `(first, last, script)` code point ranges; code points in none have",
        "/// no script.",
        "pub(super) const SCRIPT_RANGES: &[(u32, u32, Script)] = &[",
        *(f"    (0x{lo:04X}, 0x{hi:04X}, Script::{name})," for lo, hi, name in ranges),
        "];",
        "",
    ]
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    summary = f"{len(ranges)} ranges, {len(groups)} scripts, {len(no_script)} script-less"
    print(f"{summary} code points -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
