from collections import Counter

import pytest

from benchfoundry.gateway import MCQ, Gateway, GenerateParams, ModelCallError


def _ask(gateway, model, question, options, seed=0):
    return gateway.generate(
        model,
        question,
        GenerateParams(seed=seed),
        mcq=MCQ(question=question, options=tuple(options)),
    ).text


def test_random_is_seeded_per_question_and_roughly_uniform():
    gateway = Gateway()
    letters = [
        _ask(gateway, "blind/random", f"question {i}?", ["a", "b", "c", "d"]) for i in range(400)
    ]
    assert letters == [
        _ask(gateway, "blind/random", f"question {i}?", ["a", "b", "c", "d"]) for i in range(400)
    ]
    counts = Counter(letters)
    assert set(counts) == set("ABCD") and min(counts.values()) > 70
    other_seed = [
        _ask(gateway, "blind/random", f"question {i}?", ["a", "b", "c", "d"], seed=1)
        for i in range(400)
    ]
    assert other_seed != letters


def test_letter_longest_and_frequent():
    gateway = Gateway()
    assert _ask(gateway, "blind/letter-C", "q?", ["a", "b", "c"]) == "C"
    assert _ask(gateway, "blind/letter-D", "q?", ["a", "b"]) == "B", (
        "a letter past the options takes the last"
    )
    assert _ask(gateway, "blind/longest", "q?", ["a cat", "a small grey cat", "a dog"]) == "B"
    # By display width: six Chinese characters say more than a printed word of eight letters.
    assert _ask(gateway, "blind/longest", "q?", ["EXIT NOW", "一只灰色小猫", "猫"]) == "B"
    with pytest.raises(ModelCallError, match="not_prepared"):
        _ask(gateway, "blind/frequent", "q?", ["a", "b"])
    gateway.prepare("blind/frequent", ["B", "C", "B", "a"])
    assert _ask(gateway, "blind/frequent", "q?", ["a", "b", "c"]) == "B"


def test_similar_picks_the_option_closest_to_the_question():
    gateway = Gateway()
    assert gateway.sees("blind/similar") == "nothing"
    options = ["a kitchen knife", "a barking dog", "a sunny beach", "a tax form"]
    assert _ask(gateway, "blind/similar", "Which animal is guarding the house?", options) == "B"
    assert _ask(gateway, "blind/similar", "Where do people swim and sunbathe?", options) == "C"


def test_blind_models_refuse_free_text():
    with pytest.raises(ModelCallError, match="multiple-choice questions only"):
        Gateway().generate("blind/random", "Describe the image.")
