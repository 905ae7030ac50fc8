"""The card says how many questions people must still see, and how many of them a check doubts."""

from benchfoundry.core.records import ReviewBatchRecord, ReviewRecord, ScoredRecord
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.provenance import awaiting_lines


def test_the_card_counts_what_awaits_people_and_what_a_check_doubts(tmp_path, scored_record):
    run = RunFolder(tmp_path / "run")
    assert awaiting_lines(run) == []
    run.table(ReviewBatchRecord).append(
        [
            ReviewBatchRecord(batch_id="b1", reviewer="ann", dimension="d", part=1,
                              question_ids=["q1", "q2", "q3"], cross_check=False,
                              created_at="2026-12-05T00:00:00Z", spec_hash="s")
        ]
    )  # fmt: skip
    run.table(ReviewRecord).append(
        [ReviewRecord(question_id="q1", reviewer="ann", decision="accept", tool="web",
                      candidate_hash="h", decided_at="2026-12-05T00:00:01Z")]
    )  # fmt: skip
    run.table(ScoredRecord).append(
        [
            scored_record("q2", "i", flags=["possibly_flawed"], decision="flagged"),
            scored_record("q3", "i"),
        ]
    )
    (line,) = awaiting_lines(run)
    assert line.startswith("2 questions sent to review await a person's decision")
    assert "1 of them a check doubts (possibly_flawed 1)" in line
