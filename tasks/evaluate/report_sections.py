"""Sections of the HTML report that only some evaluations have: an open-ended set's scores per
capability and integration (with its failed gradings and people's corrections), and the
image-swap probe. Every value from the data is escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchfoundry.tasks.evaluate.open_summary import capabilities, score_label, spread

if TYPE_CHECKING:
    from benchfoundry.tasks.evaluate.summary import EvaluateSummary


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "-"
    return pct(value) + (f" [{pct(low)}, {pct(high)}]" if low is not None else "")


def open_html(summaries: Sequence[EvaluateSummary]) -> str:
    """Per open-ended run: scores per capability and integration, and the failed gradings with
    the grader's raw replies."""
    e = html.escape
    parts = []
    for s in summaries:
        if not s.open_scores:
            continue
        names = capabilities(s)
        integrations = sorted({c for o in s.open_scores for c in o.by_integration})
        head = "".join(f"<th>{e(h)}</th>" for h in ["model", "total", *names, *integrations])
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{e(c)}</td>"
                for c in [
                    score_label(o),
                    spread(o.total),
                    *(spread(o.by_capability.get(c)) for c in names),
                    *(spread(o.by_integration.get(c)) for c in integrations),
                ]
            )
            + "</tr>"
            for o in s.open_scores
        )
        failures = "".join(
            f"<li>{e(o.model)}: grading {f.grading} of {e(f.source_id)}: {e(f.why)}; last reply "
            f"<code>{e(repr(f.reply))}</code></li>"
            for o in s.open_scores
            for f in o.failures
        )
        corrected = "".join(
            f"<tr><td>{e(d.model)}</td><td>{e(pct(d.judge))}</td>"
            f"<td>{d.human_graded} of {d.answers}</td><td>{e(pct(d.human_mean))}</td>"
            f"<td>{e(interval(d.estimate, d.low, d.high))}</td><td>{e(d.note or '')}</td></tr>"
            for d in s.debiased
        )
        if corrected or s.debias_notes:
            corrected = (
                "<h3>Judge scores corrected with people's grades (prediction-powered "
                "inference)</h3><table><thead><tr><th>model</th><th>judge</th><th>graded by "
                "people</th><th>people</th><th>debiased [95% CI]</th><th>note</th></tr></thead>"
                f"<tbody>{corrected}</tbody></table>"
                + "".join(f"<p>{e(n)}</p>" for n in s.debias_notes)
            )
        parts.append(
            f"<h2>{e(s.dataset.name)}: scores per capability</h2>"
            f"<p>Graded by {e(s.grader or '')}, {s.open_scores[0].gradings} times per answer; "
            "mean ± standard deviation over the gradings (points of 100).</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            + (f"<h3>Failed gradings</h3><ul>{failures}</ul>" if failures else "")
            + corrected
        )
    return "".join(parts)


def probe_html(summaries: Sequence[EvaluateSummary]) -> str:
    """The image-swap probe per run: each model's accuracy with another question's image."""
    e = html.escape
    parts = []
    for s in summaries:
        if not s.probes and not s.probe_notes:
            continue
        head = "".join(
            f"<th>{e(h)}</th>"
            for h in ["model", "metric", "own image", "swapped [95% CI]", "chance", "gap", "p"]
        )
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{e(c)}</td>"
                for c in [
                    p.model,
                    p.metric,
                    pct(p.normal),
                    interval(p.swapped.accuracy, *p.swapped.interval),
                    pct(p.chance),
                    f"{p.gap:+.1%}",
                    "-" if p.p_value is None else f"{p.p_value:.2g}",
                ]
            )  # fmt: skip
            + "</tr>"
            for p in s.probes
        )
        said = [x for p in s.probes if (x := p.sentence())] + s.probe_notes
        parts.append(
            f"<h2>Probes of looking: {e(s.dataset.name)}</h2>"
            "<p>Each question asked again with another image of the set; one-sided exact test "
            "against chance.</p>"
            + (
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                if body
                else ""
            )
            + ("<ul>" + "".join(f"<li>{e(x)}</li>" for x in said) + "</ul>" if said else "")
        )
    return "".join(parts)
