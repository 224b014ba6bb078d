"""Small charts as inline SVG, rendered on the server (no script, no library): grouped bars and
lines over days. Colours come from the stylesheet (classes ``s0``…``s5``), so the SVG holds no
style attribute the Content-Security-Policy would refuse."""

from __future__ import annotations

import html

W, H = 720, 180
PAD_L, PAD_R, PAD_T, PAD_B = 44, 10, 10, 24


def _e(v) -> str:
    return html.escape(str(v), quote=True)


def _frame(days: list[str], top: float, percent: bool) -> list[str]:
    out = [f'<line class="axis" x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}"/>']
    for frac in (0.5, 1.0):
        y = H - PAD_B - frac * (H - PAD_T - PAD_B)
        label = f"{frac * top * 100:.0f}%" if percent else (f"{frac * top:,.0f}" if top >= 10 else f"{frac * top:.1f}")
        out.append(
            f'<line class="grid" x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{PAD_L - 4}" y="{y + 4:.1f}" text-anchor="end">{_e(label)}</text>'
        )
    n = len(days)
    for i in (0, n // 2, n - 1) if n else ():
        x = PAD_L + (i + 0.5) * (W - PAD_L - PAD_R) / n
        out.append(f'<text class="tick" x="{x:.1f}" y="{H - 6}" text-anchor="middle">{_e(days[i][5:])}</text>')
    return out


def _legend(names: list[str]) -> str:
    items = "".join(f'<span class="key"><span class="sw s{i % 6}"></span>{_e(n)}</span>' for i, n in enumerate(names))
    return f'<div class="legend">{items}</div>'


def bars(days: list[str], series: dict[str, list[float]]) -> str:
    names = list(series)
    top = max([max(v) if v else 0 for v in series.values()] + [1])
    n = max(len(days), 1)
    slot = (W - PAD_L - PAD_R) / n
    width = slot * 0.8 / max(len(names), 1)
    parts = _frame(days, top, False)
    for j, name in enumerate(names):
        for i, v in enumerate(series[name]):
            h = (H - PAD_T - PAD_B) * (v / top)
            x = PAD_L + i * slot + slot * 0.1 + j * width
            parts.append(
                f'<rect class="s{j % 6}" x="{x:.1f}" y="{H - PAD_B - h:.1f}" width="{width:.1f}" '
                f'height="{h:.1f}"><title>{_e(days[i])} {_e(name)}: {v:g}</title></rect>'
            )
    return (
        f'<figure class="chart"><svg viewBox="0 0 {W} {H}" role="img" aria-label="{_e(", ".join(names))}">'
        f'{"".join(parts)}</svg>{_legend(names)}</figure>'
    )


def line(days: list[str], series: dict[str, list[float | None]], percent: bool = False, dots: bool = False) -> str:
    """Lines over ``days``; a value of None (nothing to count that day) is left out. ``dots``
    marks each value, with its figure on hover (for a few points, where a line alone says little)."""
    names = list(series)
    top = 1.0 if percent else max([v for vs in series.values() for v in vs if v is not None] + [1])
    n = max(len(days), 1)
    slot = (W - PAD_L - PAD_R) / n
    parts = _frame(days, top, percent)
    for j, name in enumerate(names):
        xy = [
            (i, PAD_L + (i + 0.5) * slot, H - PAD_B - (H - PAD_T - PAD_B) * (v / top), v)
            for i, v in enumerate(series[name])
            if v is not None
        ]
        pts = " ".join(f"{x:.1f},{y:.1f}" for _i, x, y, _v in xy)
        parts.append(f'<polyline class="ln s{j % 6}" points="{pts}"><title>{_e(name)}</title></polyline>')
        if dots:
            parts.extend(
                f'<circle class="s{j % 6}" cx="{x:.1f}" cy="{y:.1f}" r="3.5"><title>{_e(days[i])} '
                f'{_e(name)}: {_e(f"{v:.0%}" if percent else f"{v:g}")}</title></circle>'
                for i, x, y, v in xy
            )
    return (
        f'<figure class="chart"><svg viewBox="0 0 {W} {H}" role="img" aria-label="{_e(", ".join(names))}">'
        f'{"".join(parts)}</svg>{_legend(names)}</figure>'
    )
