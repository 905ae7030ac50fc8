"""The generate summary says so when images went in and no question came out."""

from benchfoundry.tasks.generate.summary import GenerateSummary


def _summary(**fields):
    values = dict(
        run="r", taxonomy="seed_bench", images=3, drafts=0, candidates=0, candidates_added=0,
        refused_by_reason={}, by_generator={}, per_dimension={}, letter_distribution={},
        flagged_length_outliers=0, cost=0.0,
        not_asked={"instances_counting": {"unlabeled_regions": 3},
                   "text_understanding": {"no_text": 2, "word_fragment": 1}},
    )  # fmt: skip
    return GenerateSummary(**{**values, **fields})


def test_no_question_from_the_images_is_a_warning_with_the_reasons():
    said = _summary().warning()
    assert said.startswith("WARNING: no question was made from 3 images")
    assert "unlabeled_regions 3" in said and "no_text 2" in said and "models.generator" in said
    assert said in "\n".join(_summary().lines()) and said in _summary().markdown()
    assert _summary(candidates=5, drafts=5).warning() is None
    assert _summary(images=0).warning() is None
