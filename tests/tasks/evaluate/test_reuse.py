"""The evaluation's sentence on the answers it replayed from the response cache."""

from benchfoundry.tasks.evaluate.reuse import reuse_sentence


def test_the_summary_says_what_was_reused():
    class Calls:
        def __init__(self, made: int, cached: int) -> None:
            self.calls_made, self.calls_cached = made, cached

    assert reuse_sentence([Calls(5, 0)]) is None
    sentence = reuse_sentence([Calls(157, 471), Calls(0, 314)])
    assert sentence is not None
    assert sentence.startswith("answers reused: 785 of 942 came from the response cache")
    assert sentence.endswith("not asked again, not charged; 157 sent")
