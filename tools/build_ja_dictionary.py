"""Builds tokenmill's default Japanese word list from IPADIC.

    python tools/build_ja_dictionary.py [path/to/ipadic/dicdir] [--cost-scale 800]

Without a path, the dictionary of the PyPI package ``ipadic`` (``pip install ipadic==1.0.0``:
mecab-ipadic 2.7.0-20070801 compiled to UTF-8 by the package's authors) is used; the package
need not be importable, its unpacked source directory (``pip download --no-deps ipadic==1.0.0``)
works too. Writes ``python/tokenmill/data/ja/ipadic_words.txt.gz``: one ``word frequency`` line
per distinct surface form, sorted, and copies IPADIC's licence (``COPYING``) beside it.

How: the compiled dictionary ``sys.dic`` (MeCab's binary format, version 102) holds a double
array over the surface forms, whose leaves point at the entries of each form, and the entries
hold a word cost (MeCab's ``-log P`` of the word, times the dictionary's ``cost-factor``, 800
for IPADIC). The double array is walked breadth first to list every form. A form's frequency is
``round(exp((MAX_COST - cost) / scale))`` for its cheapest entry, so that ``ln(freq)`` is the
word's negated cost in nats up to a constant (the segmenter works with ``ln(freq / total)``, in
which the constant cancels); connection costs between parts of speech are not used (the
segmenter has no parts of speech). Forms with whitespace or a NUL are skipped. The output is
deterministic (gzip without a timestamp).

IPADIC is distributed under its own permissive licence (copyright NAIST, with the ICOT Free
Software conditions): use, reproduction and distribution are permitted provided the copyright
notice and the licence text go with every copy, which ``python/tokenmill/data/ja/COPYING``
does. See ``python/tokenmill/data/ja/README.md``.
"""

import argparse
import gzip
import io
import math
import os
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

DATA = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "tokenmill", "data", "ja"
)
OUT = os.path.join(DATA, "ipadic_words.txt.gz")

HEADER = struct.Struct("<10I32s")
TOKEN = np.dtype(
    [
        ("lc", "<u2"),
        ("rc", "<u2"),
        ("pos", "<u2"),
        ("cost", "<i2"),
        ("feature", "<u4"),
        ("compound", "<u4"),
    ]
)
UNIT = np.dtype([("base", "<i4"), ("check", "<u4")])


def find_dicdir() -> str:
    try:
        import ipadic
    except ImportError:
        sys.exit("give the path of ipadic's dicdir, or pip install ipadic==1.0.0")
    return ipadic.DICDIR


def read_sys_dic(path: str):
    """The double array and the token table of a MeCab ``sys.dic``."""
    data = Path(path).read_bytes()
    _magic, version, _type, lexsize, _lsize, _rsize, dsize, tsize, _fsize, _dummy, charset = (
        HEADER.unpack_from(data)
    )
    if version != 102:
        sys.exit(f"{path}: MeCab dictionary version {version}, expected 102")
    if charset.rstrip(b"\0").lower() not in (b"utf8", b"utf-8"):
        sys.exit(f"{path}: charset {charset.rstrip(bytes(1))!r}, expected UTF-8")
    offset = HEADER.size
    units = np.frombuffer(data, UNIT, dsize // UNIT.itemsize, offset)
    tokens = np.frombuffer(data, TOKEN, tsize // TOKEN.itemsize, offset + dsize)
    if len(tokens) != lexsize:
        sys.exit(f"{path}: {len(tokens)} tokens, header says {lexsize}")
    return units, tokens


def surface_forms(units: np.ndarray):
    """Yields ``(form bytes, value)`` for every key of MeCab's double array (Darts): from a
    node with base ``b``, the child by byte ``c`` is unit ``b + c + 1`` if its check is ``b``;
    the node is a key's end if unit ``b`` has check ``b`` and a negative base ``-value - 1``."""
    base = units["base"].astype(np.int64)
    check = units["check"].astype(np.int64)
    size = len(units)
    labels = np.arange(1, 256, dtype=np.int64)
    # Frontier: the base of each node and the id of its prefix (parents and bytes kept per id).
    parents, bytes_of = [-1], [0]
    frontier_base = np.array([base[0]], dtype=np.int64)
    frontier_id = np.array([0], dtype=np.int64)
    found = []
    while len(frontier_base):
        b = frontier_base
        inside = (b >= 0) & (b < size)
        ends = np.zeros(len(b), dtype=bool)
        ends[inside] = (check[b[inside]] == b[inside]) & (base[b[inside]] < 0)
        for node, value in zip(frontier_id[ends], -base[b[ends]] - 1):
            found.append((int(node), int(value)))
        next_base, next_id = [], []
        for start in range(0, len(b), 4096):
            bb = b[start : start + 4096, None]
            ids = frontier_id[start : start + 4096]
            p = bb + labels[None, :] + 1
            ok = (p < size) & (bb >= 0)
            ok[ok] = check[p[ok]] == np.broadcast_to(bb, p.shape)[ok]
            rows, cols = np.nonzero(ok)
            first_new = len(parents)
            parents.extend(ids[rows].tolist())
            bytes_of.extend((cols + 1).tolist())
            next_base.append(base[p[rows, cols]])
            next_id.append(np.arange(first_new, first_new + len(rows), dtype=np.int64))
        frontier_base = np.concatenate(next_base) if next_base else np.array([], dtype=np.int64)
        frontier_id = np.concatenate(next_id) if next_id else np.array([], dtype=np.int64)
    for node, value in found:
        key = bytearray()
        while node > 0:
            key.append(bytes_of[node])
            node = parents[node]
        yield bytes(reversed(key)), value


def build(dicdir: str, scale: float):
    units, tokens = read_sys_dic(os.path.join(dicdir, "sys.dic"))
    costs = tokens["cost"].astype(np.int64)
    best = {}
    for key, value in surface_forms(units):
        first, count = value >> 8, value & 0xFF
        if count == 0 or first + count > len(tokens):
            sys.exit(f"bad double-array value {value} for {key!r}")
        form = key.decode("utf-8")
        if not form or any(c.isspace() or c == "\0" for c in form):
            continue
        cost = int(costs[first : first + count].min())
        best[form] = min(cost, best.get(form, cost))
    max_cost = max(best.values())
    return {form: max(1, round(math.exp((max_cost - cost) / scale))) for form, cost in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "dicdir", nargs="?", help="ipadic's dicdir (default: the installed ipadic package's)"
    )
    ap.add_argument(
        "--cost-scale", type=float, default=800.0, help="word cost per nat (IPADIC's cost-factor)"
    )
    args = ap.parse_args()
    dicdir = args.dicdir or find_dicdir()
    freqs = build(dicdir, args.cost_scale)
    text = "".join(f"{w} {f}\n" for w, f in sorted(freqs.items())).encode("utf-8")
    os.makedirs(DATA, exist_ok=True)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(text)
    with open(OUT, "wb") as f:
        f.write(buffer.getvalue())
    shutil.copyfile(os.path.join(dicdir, "COPYING"), os.path.join(DATA, "COPYING"))
    print(f"{len(freqs)} words, {len(text)} bytes, {len(buffer.getvalue())} compressed -> {OUT}")


if __name__ == "__main__":
    main()
