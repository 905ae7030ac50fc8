"""The possibly-flawed flag's two votes counted for the QC summary: what the evidence reader
said on the template items (confirmed, read otherwise, not answered), which vote flagged them
(the reader's, the models', or both: signals add, none silences another), and, where the reader
could not read text at all (no Tesseract), a warning naming the text items it abstained on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchfoundry.core.records import CandidateRecord
from benchfoundry.evidence.text import MISSING, available
from benchfoundry.tasks.qc.assess import EVIDENCE_VOTE, MODELS_VOTE
from benchfoundry.tasks.qc.evidence import Evidence
from benchfoundry.tasks.qc.select import Assessed

TEXT_KINDS = ("template:scene_content",)  # the kinds the reader answers from the text it reads


def evidence_counts(templates: Sequence[str], evidence: Mapping[str, Evidence]) -> dict[str, int]:
    """The reader's verdicts on the template items `templates` (question ids)."""
    read = [evidence[q].agrees for q in templates if q in evidence]
    return {
        "confirmed": sum(read),
        "read_otherwise": len(read) - sum(read),
        "not_answered": len(templates) - len(read),
    }


def vote_counts(templates: Sequence[str], items: Sequence[Assessed]) -> dict[str, int]:
    """Which of the flag's votes flagged the template items `templates`: the reader's alone,
    the models' alone, or both."""
    codes = {i.question_id: set(i.verdict.codes) for i in items}
    votes = [codes.get(q, set()) & {EVIDENCE_VOTE, MODELS_VOTE} for q in templates]
    return {
        "reader_only": sum(v == {EVIDENCE_VOTE} for v in votes),
        "models_only": sum(v == {MODELS_VOTE} for v in votes),
        "both": sum(len(v) == 2 for v in votes),
    }


def text_warning(candidates: Sequence[CandidateRecord], refused: set[str]) -> str | None:
    """Where Tesseract is missing, the text items whose check the reader abstains on."""
    if available():
        return None
    text = [c for c in candidates if c.generator in TEXT_KINDS and c.question_id not in refused]
    if not text:
        return None
    return (
        f"the evidence reader read no text: {MISSING}; its checks of {len(text)} text template "
        "item(s) abstain, and only the models' vote can flag them"
    )
