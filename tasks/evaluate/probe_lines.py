"""The image-swap probe as the evaluation's summary shows it: its table, warnings and notes."""

from __future__ import annotations

from collections.abc import Sequence

from benchfoundry.tasks.evaluate.probes import SwapProbe
from benchfoundry.tasks.evaluate.stats import accuracy_text


def p_text(value: float | None) -> str:
    return "-" if value is None else f"p {value:.2g}"


def probe_sentences(probes: Sequence[SwapProbe]) -> list[str]:
    return [x for p in probes if (x := p.sentence())]


def probe_markdown(probes: Sequence[SwapProbe], notes: Sequence[str]) -> list[str]:
    """The image-swap probe's table, its warnings and its notes."""
    if not probes and not notes:
        return []
    lines = []
    if probes:
        lines += [
            "",
            "Image swapped (each question asked with another image of the set; one-sided exact "
            "test against chance):",
            "",
            "| model | metric | own image | swapped [95% CI] | chance | gap | p | above chance |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {p.model} | {p.metric} | {p.normal:.1%} | {accuracy_text(p.swapped)} | "
            f"{p.chance:.1%} | {p.gap:+.1%} | {p_text(p.p_value).removeprefix('p ')} | "
            f"{'yes' if p.above_chance else 'no'} |"
            for p in probes
        ]
    said = [*probe_sentences(probes), *notes]
    return lines + (["", *(f"- {x}" for x in said)] if said else [])
