"""The console table and the HTML report of :mod:`tokenmill.evaluate`.

The report is one self-contained file: inline CSS and SVG charts written here by hand (a few
lines per chart; a plotting library would add a dependency, and a JavaScript one would need the
network or a bundled script), so that it opens from disk with no network.
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

if TYPE_CHECKING:
    from tokenmill.evaluate import CorpusResult, Evaluation

# ---- console ---------------------------------------------------------------------------------


def _fmt(x: float, digits: int = 3) -> str:
    return (
        "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"
    )


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _aligned(header: Sequence[str], rows: List[Sequence[str]], left: int = 1) -> List[str]:
    """Columns padded to their widest cell: the first ``left`` to the left, the rest right."""
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]

    def line(r: Sequence[str]) -> str:
        cells = [
            str(c).ljust(w) if k < left else str(c).rjust(w)
            for k, (c, w) in enumerate(zip(r, widths))
        ]
        return "  " + "  ".join(cells).rstrip()

    return [line(header), "  " + "  ".join("-" * w for w in widths)] + [line(r) for r in rows]


def _result_row(r: CorpusResult) -> List[str]:
    lengths = r.lengths
    return [
        r.tokenizer,
        str(r.tokens),
        _fmt(r.bytes_per_token, 2),
        _fmt(r.characters_per_token, 2),
        _fmt(r.fertility, 2),
        _fmt(100 * r.split_share, 1),
        f"{lengths.mean:.1f}/{lengths.median:g}/{lengths.p90:g}/{lengths.p99:g}/{lengths.max}",
        _fmt(100 * r.utilization, 1),
        _fmt(r.renyi_efficiency, 3),
        str(r.under_trained),
    ]


RESULT_HEADER = [
    "tokenizer",
    "tokens",
    "bytes/tok",
    "chars/tok",
    "tok/word",
    "split %",
    "length mean/med/p90/p99/max",
    "vocab used %",
    "Rényi",
    "rare",
]


def console(ev: Evaluation, parity_rows: int = 10) -> str:
    out = ["Tokenizers"]
    out += _aligned(
        ["tokenizer", "kind", "vocabulary", "special", "unreachable", "longest token"],
        [
            [
                t.name,
                t.kind,
                str(t.vocab_size),
                str(t.special),
                f"{t.unreachable} of {t.checked}",
                _short(repr(t.longest[0][1])) if t.longest else "-",
            ]
            for t in ev.tokenizers
        ],
    )
    for c in ev.corpora:
        out += [
            "",
            f"Corpus {c['name']}: {c['documents']} documents, {c['bytes']} bytes; "
            f"language {c['language']}, words: {c['words']}",
        ]
        rows = [_result_row(r) for r in ev.results if r.corpus == c["name"]]
        out += _aligned(RESULT_HEADER, rows)
    if ev.corpora:
        out.append(
            f"(split %: words taking more than one token; Rényi: efficiency of order "
            f"{ev.renyi_power:g}; rare: entries produced at most {ev.rare} times)"
        )
    if ev.parity:
        p = ev.parity
        names = p.tokenizers
        out += [
            "",
            f"Parity on {len(p.rows)} languages of {p.source}: tokens relative to {p.reference} "
            f"(sorted by {names[0]})",
        ]
        shown = (
            p.rows
            if len(p.rows) <= 2 * parity_rows
            else (
                p.rows[:parity_rows] + [None] + p.rows[-parity_rows:]  # type: ignore[list-item]
            )
        )
        rows = [
            ["...", "", ""] + ["" for _ in names]
            if r is None
            else [r.language, r.script, str(r.bytes)] + [_fmt(r.premium[n], 2) for n in names]
            for r in shown
        ]
        out += _aligned(["language", "script", "bytes"] + names, rows, left=2)
        if p.partial:
            out.append(f"(left out, partial translations: {', '.join(p.partial)})")
    return "\n".join(out)


# ---- HTML ------------------------------------------------------------------------------------

PALETTE = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
    "#31a354", "#756bb1", "#636363", "#fd8d3c", "#6baed6", "#74c476", "#9e9ac8", "#fdae6b",
]  # fmt: skip

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; overflow-wrap: anywhere; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.note { color: #555; font-size: .92em; }
.legend span { display: inline-block; margin-right: 1em; white-space: nowrap; }
.sw { display: inline-block; width: .9em; height: .9em; vertical-align: middle;
      margin-right: .3em; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.tokens { white-space: pre-wrap; font-family: ui-monospace, monospace; line-height: 1.9; }
.tokens span { border-radius: 2px; padding: 1px 0; }
.sample td { vertical-align: top; text-align: left; }
.sample td:first-child { white-space: nowrap; overflow-wrap: normal; }
code { background: #f3f3f3; padding: 0 3px; }
"""


def _color(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


def _table(header: Sequence[str], rows: List[Sequence[str]], left: int = 1) -> str:
    def cells(tag: str, row: Sequence[str]) -> str:
        return "".join(
            f"<{tag}{' class=l' if k < left else ''}>{escape(str(c))}</{tag}>"
            for k, c in enumerate(row)
        )

    body = "".join(f"<tr>{cells('td', r)}</tr>" for r in rows)
    return f"<table><tr>{cells('th', header)}</tr>{body}</table>"


def _svg(width: int, height: int, body: str, label: str) -> str:
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}" '
        f'font-family="sans-serif">{body}</svg>'
    )


def _text(
    x: float, y: float, s: str, size: int = 10, anchor: str = "start", extra: str = ""
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
        f"{escape(s)}</text>"
    )


def _legend(items: Sequence[Tuple[str, str]]) -> str:
    spans = "".join(
        f'<span><i class="sw" style="background:{c}"></i>{escape(n)}</span>' for n, c in items
    )
    return f'<p class="legend">{spans}</p>'


def _lines_chart(
    series: Dict[str, List[Tuple[float, float]]],
    colors: Dict[str, str],
    title: str,
    xlabel: str,
    ylabel: str,
    log: bool,
) -> str:
    """Polylines on linear or log-log axes."""
    w, h, left, bottom, top, right = 520, 300, 60, 40, 24, 14
    points = [p for s in series.values() for p in s if not log or (p[0] > 0 and p[1] > 0)]
    if not points:
        return ""

    def tr(v: float) -> float:
        return math.log10(v) if log else v

    xs, ys = [tr(p[0]) for p in points], [tr(p[1]) for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = (min(ys), max(ys)) if log else (0.0, max(ys))
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)

    def px(v: float) -> float:
        return left + (tr(v) - x0) / (x1 - x0) * (w - left - right)

    def py(v: float) -> float:
        return h - bottom - (tr(v) - y0) / (y1 - y0) * (h - bottom - top)

    body = [_text(w / 2, 15, title, 12, "middle", ' font-weight="bold"')]
    body.append(f'<path d="M{left},{top} V{h - bottom} H{w - right}" fill="none" stroke="#444"/>')
    for k in range(5):
        fx, fy = x0 + (x1 - x0) * k / 4, y0 + (y1 - y0) * k / 4
        vx, vy = (10**fx, 10**fy) if log else (fx, fy)
        sx = left + (w - left - right) * k / 4
        sy = h - bottom - (h - bottom - top) * k / 4
        body.append(_text(sx, h - bottom + 14, f"{vx:.3g}", 9, "middle"))
        body.append(_text(left - 4, sy + 3, f"{vy:.3g}", 9, "end"))
    body.append(_text(w / 2, h - 6, xlabel, 10, "middle"))
    body.append(_text(12, h / 2, ylabel, 10, "middle", f' transform="rotate(-90 12 {h / 2:.0f})"'))
    for name, s in series.items():
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s if not log or (x > 0 and y > 0))
        body.append(
            f'<polyline points="{pts}" fill="none" stroke="{colors[name]}" stroke-width="1.6">'
            f"<title>{escape(name)}</title></polyline>"
        )
    return _svg(w, h, "".join(body), title)


def _parity_chart(ev: Evaluation, name: str, script_colors: Dict[str, str], top: float) -> str:
    p = ev.parity
    assert p is not None
    rows = sorted(p.rows, key=lambda r: (-(r.premium[name] or 0), r.language))
    bar, left, w, head = 7, 56, 262, 30
    h = head + bar * len(rows) + 24
    scale = (w - left - 10) / top
    body = [_text(w / 2, 14, name, 12, "middle", ' font-weight="bold"')]
    for k in range(5):
        v = top * k / 4
        x = left + v * scale
        body.append(
            f'<line x1="{x:.1f}" y1="{head - 4}" x2="{x:.1f}" y2="{h - 20}" stroke="#ddd"/>'
        )
        body.append(_text(x, head - 7, f"{v:.3g}", 8, "middle"))
    for k, r in enumerate(rows):
        y = head + k * bar
        v = r.premium[name]
        v = v if v is not None and math.isfinite(v) else 0.0
        body.append(_text(left - 3, y + bar - 1, r.language, 6, "end"))
        body.append(
            f'<rect x="{left}" y="{y}" width="{max(v * scale, 0.5):.1f}" height="{bar - 1}" '
            f'fill="{script_colors[r.script]}"><title>{escape(r.language)} ({escape(r.script)}'
            f"): {v:.2f}× {escape(p.reference)}, {r.tokens[name]} tokens</title></rect>"
        )
    x1 = left + scale
    body.append(
        f'<line x1="{x1:.1f}" y1="{head - 4}" x2="{x1:.1f}" y2="{h - 20}" '
        'stroke="#000" stroke-dasharray="3,2"/>'
    )
    body.append(_text(w / 2, h - 6, f"tokens relative to {p.reference}", 9, "middle"))
    return _svg(w, h, "".join(body), f"parity of {name}")


def _token_spans(pieces: List[Tuple[List[int], str]]) -> str:
    out = []
    for k, (ids, text) in enumerate(pieces):
        hue = (k * 67) % 360
        shown = text.replace("\n", "↵\n") if text else "∅"
        several = len(ids) > 1  # one character in several tokens: outlined
        title = ("ids " if several else "id ") + " ".join(map(str, ids))
        style = f"background:hsl({hue},70%,85%)" + (";outline:1px dashed #555" if several else "")
        out.append(f'<span style="{style}" title="{title}">{escape(shown)}</span>')
    return "".join(out)


def to_html(ev: Evaluation) -> str:
    names = [t.name for t in ev.tokenizers]
    colors = {n: _color(k) for k, n in enumerate(names)}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>tokenmill evaluation</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Tokenizer evaluation</h1>",
        _legend([(n, colors[n]) for n in names]),
        "<h2>Tokenizers</h2>",
        _table(
            ["tokenizer", "kind", "vocabulary", "special", "checked", "unreachable"],
            [
                [t.name, t.kind, t.vocab_size, t.special, t.checked, t.unreachable]
                for t in ev.tokenizers
            ],
        ),
        '<p class="note">Unreachable: entries that encoding their own text does not produce '
        "(special, added and byte-fallback entries are not checked).</p>",
    ]
    for t in ev.tokenizers:
        if t.unreachable_examples:
            listed = ", ".join(
                f"{_short(repr(u.token))} (id {u.id}) → {u.encodes_as}"
                for u in t.unreachable_examples
            )
            parts.append(f"<p><b>{escape(t.name)}</b> unreachable: {escape(listed)}</p>")
        listed = ", ".join(f"{_short(repr(tok))} ({n} bytes)" for _, tok, n in t.longest[:10])
        parts.append(f"<p><b>{escape(t.name)}</b> longest: {escape(listed)}</p>")
    for c in ev.corpora:
        results = [r for r in ev.results if r.corpus == c["name"]]
        parts += [
            f"<h2>Corpus {escape(c['name'])}</h2>",
            f'<p class="note">{c["documents"]} documents, {c["bytes"]} bytes; language '
            f"{escape(c['language'])}; words: {escape(c['words'])}.</p>",
            _table(RESULT_HEADER, [_result_row(r) for r in results]),
            f'<p class="note">split %: word occurrences taking more than one token; Rényi: '
            f"efficiency of order {ev.renyi_power:g}; rare: entries produced at most {ev.rare} "
            "times (candidates for under-trained tokens).</p>",
        ]
        for r in results:
            if r.under_trained_examples:
                listed = ", ".join(_short(repr(x)) for x in r.under_trained_examples[:12])
                parts.append(
                    f"<p><b>{escape(r.tokenizer)}</b> rare, longest first: {escape(listed)}</p>"
                )
        hist = {r.tokenizer: [(x, n) for x, n in r.lengths.histogram] for r in results}
        ranks = {r.tokenizer: [(float(a), float(b)) for a, b in r.rank_frequency] for r in results}
        parts.append('<div class="charts">')
        parts.append(
            _lines_chart(
                hist,
                colors,
                "Sequence lengths",
                "tokens per document (to p99)",
                "documents",
                log=False,
            )
        )
        parts.append(_lines_chart(ranks, colors, "Rank-frequency", "rank", "count", log=True))
        parts.append("</div>")
    if ev.parity:
        p = ev.parity
        scripts = sorted(
            {r.script for r in p.rows}, key=lambda s: -sum(1 for r in p.rows if r.script == s)
        )
        script_colors = {
            s: _color(k) if k < len(PALETTE) - 1 else "#aaa" for k, s in enumerate(scripts)
        }
        values = [v for r in p.rows for v in r.premium.values() if v is not None]
        top = max([v for v in values if math.isfinite(v)] + [1.0])
        parts += [
            f"<h2>Parity across {len(p.rows)} languages</h2>",
            f'<p class="note">Tokens for the same text ({escape(p.source)}) relative to '
            f"{escape(p.reference)} (and the token count), per tokenizer, sorted; colored by "
            "script."
            + (
                f" Left out, partial translations: {escape(', '.join(p.partial))}."
                if p.partial
                else ""
            )
            + "</p>",
            _legend([(s, script_colors[s]) for s in scripts]),
            '<div class="charts">',
            *[_parity_chart(ev, n, script_colors, top) for n in names],
            "</div>",
            _table(
                ["language", "script", "bytes"] + names,
                [
                    [r.language, r.script, r.bytes]
                    + [f"{_fmt(r.premium[n], 2)} ({r.tokens[n]})" for n in names]
                    for r in p.rows
                ],
                left=2,
            ),
        ]
    if ev.samples:
        parts.append("<h2>Token view</h2>")
        parts.append('<p class="note">Each token colored; hover for its id.</p>')
        for s in ev.samples:
            rows = "".join(
                f"<tr><td>{escape(n)}<br>"
                f"<small>{sum(len(ids) for ids, _ in s.tokens[n])} tokens</small></td>"
                f'<td class="tokens">{_token_spans(s.tokens[n])}</td></tr>'
                for n in names
            )
            parts.append(f'<h3>{escape(s.label)}</h3><table class="sample">{rows}</table>')
    parts.append("</body></html>")
    return "\n".join(x for x in parts if x)
