"""The extraction table: varied responses and what they must be read as (None = undecided).
Grow it whenever a real response is misread."""

import pytest

from benchfoundry.answering.choice import clear_caches, extract_choice

ANIMALS = ["a cat", "a dog", "a bird", "a fish"]
COUNTS = ["2", "3", "4", "5"]
YES_NO = ["yes", "no"]
COLOURS = ["red", "green", "blue", "yellow", "black"]
NESTED = ["cat", "black cat", "dog"]
FRUITS = ["苹果", "香蕉", "橙子", "葡萄"]  # MMBench-CN style
REDS = ["红色", "深红色", "蓝色"]

TABLE = [
    # bare letters in their many forms
    ("B", ANIMALS, "B"),
    ("b", ANIMALS, "B"),
    ("d", ANIMALS, "D"),
    ("(d)", ANIMALS, "D"),
    ("a", ANIMALS, None),  # the article, or A: undecided
    ("i", ANIMALS + ["an owl"] * 5, None),  # the pronoun, or I
    ("(a)", ANIMALS, "A"),
    ("e", ANIMALS, None),
    ("(B)", ANIMALS, "B"),
    ("B.", ANIMALS, "B"),
    ("B)", ANIMALS, "B"),
    ("**B**", ANIMALS, "B"),
    ("[B]", ANIMALS, "B"),
    ("  C  ", ANIMALS, "C"),
    ("A", ANIMALS, "A"),
    ("A.", ANIMALS, "A"),
    ("Ｂ", ANIMALS, "B"),
    ("（C）", ANIMALS, "C"),
    ("\\boxed{D}", ANIMALS, "D"),
    ("The final answer is $\\boxed{C}$.", ANIMALS, "C"),
    ("<answer>A</answer>", ANIMALS, "A"),
    ("<answer> B </answer>", ANIMALS, "B"),
    # explicit markers
    ("The answer is B.", ANIMALS, "B"),
    ("the answer is (C)", ANIMALS, "C"),
    ("Answer: D", ANIMALS, "D"),
    ("Answer: B. a dog", ANIMALS, "B"),
    ("The correct answer is A.", ANIMALS, "A"),
    ("The correct option is C, a bird.", ANIMALS, "C"),
    ("Option B", ANIMALS, "B"),
    ("option b", ANIMALS, "B"),
    ("Option c", ANIMALS, "C"),
    ("the final answer is b.", ANIMALS, "B"),
    ("Answer: (d)", ANIMALS, "D"),
    ("answer: a", ANIMALS, None),
    ("The answer is a cat.", ANIMALS, "A"),  # the option's text, not the letter
    ("option e", ANIMALS, None),
    ("The final answers are listed below.", ANIMALS, None),
    ("I'd pick C. bird", ANIMALS, "C"),
    ("I'd pick c", ANIMALS, "C"),
    ("I would choose b", ANIMALS, "B"),
    ("I would choose B.", ANIMALS, "B"),
    ("I'd say D", ANIMALS, "D"),
    ("I choose D.", ANIMALS, "D"),
    ("Correct answer: **C**", ANIMALS, "C"),
    ("Final answer: A", ANIMALS, "A"),
    ("答案是B", ANIMALS, "B"),
    ("答案：C", ANIMALS, "C"),
    ("选A", ANIMALS, "A"),
    ("我选择D。", ANIMALS, "D"),
    ("The answer is E.", ANIMALS, None),
    ("Answer: F", ANIMALS, None),
    # leading letter followed by its text
    ("B. a dog", ANIMALS, "B"),
    ("(C) a bird", ANIMALS, "C"),
    ("C: a bird", ANIMALS, "C"),
    ("D - a fish", ANIMALS, "D"),
    ("B, because it barks.", ANIMALS, "B"),
    ("It is C.", ANIMALS, "C"),
    ("I think it's D.", ANIMALS, "D"),
    # the article "A" and pronoun "I" are not letters
    ("A dog is sitting on the grass.", ANIMALS, "B"),
    ("A cat.", ANIMALS, "A"),
    ("I see a fish in the bowl.", ANIMALS, "D"),
    ("A small bird on a branch", ANIMALS, None),
    ("Either A or B.", ANIMALS, None),
    ("A or C", ANIMALS, None),
    ("A is correct.", ANIMALS, "A"),
    ("I think A.", ANIMALS, "A"),
    # two options, or a letter that is not an option: undecided
    ("B or C", ANIMALS, None),
    ("A, B", ANIMALS, None),
    (
        "A, since the sign is red and octagonal, drivers must come to a full stop before the line.",
        ["stop", "go", "yield", "turn left"],
        "A",
    ),
    ("A, since the sign is red...", ANIMALS, "A"),
    ("(A) cat (B) dog", ANIMALS, None),
    ("Either B or D could be right.", ANIMALS, None),
    ("The answer is B or C.", ANIMALS, None),
    ("Answer: B. Answer: C.", ANIMALS, None),
    ("E", ANIMALS, None),
    ("(F)", ANIMALS, None),
    # negations
    ("D, not B", ANIMALS, "D"),
    ("The answer is D, not B.", ANIMALS, "D"),
    ("Not B.", ANIMALS, None),
    ("It is not A.", ANIMALS, None),
    ("It is a dog, not a cat.", ANIMALS, "B"),
    # option texts
    ("a dog", ANIMALS, "B"),
    ("A DOG!", ANIMALS, "B"),
    ("dog", ANIMALS, None),
    ("The animal in the picture is a fish.", ANIMALS, "D"),
    ("There is a cat and a dog.", ANIMALS, None),
    ("black cat", NESTED, "B"),
    ("It is a black cat sleeping.", NESTED, "B"),
    ("A cat, definitely.", NESTED, "A"),
    ("The colour is blue.", COLOURS, "C"),
    ("It looks yellow to me", COLOURS, "D"),
    ("Black.", COLOURS, "E"),
    ("red and green stripes", COLOURS, None),
    # option texts in Chinese, written without spaces (MMBench-CN)
    ("正确答案为香蕉", FRUITS, "B"),
    ("这张图片里是葡萄。", FRUITS, "D"),
    ("香蕉", FRUITS, "B"),
    ("答案：香蕉", FRUITS, "B"),
    ("不是苹果，是香蕉", FRUITS, "B"),
    ("是香蕉而非苹果", FRUITS, "B"),
    ("排除橙子以后，我认为是葡萄", FRUITS, "D"),
    ("不是苹果", FRUITS, None),  # only rules one out
    ("图中有苹果和香蕉", FRUITS, None),
    ("苹果或者葡萄", FRUITS, None),
    ("这是深红色的", REDS, "B"),  # 红色 inside 深红色 is not 红色
    ("颜色是红色", REDS, "A"),
    ("不是深红色，是红色", REDS, "A"),
    ("红色和深红色都有", REDS, None),
    ("答案：B", FRUITS, "B"),
    ("选C", FRUITS, "C"),
    ("答案是D，葡萄", FRUITS, "D"),
    ("无法确定", FRUITS, "Z"),
    ("以上都不是", FRUITS, "Z"),
    # a Chinese reply to English options reads them as before: whole words only
    ("答案是 a dog", ANIMALS, "B"),
    ("图片里是一只 dog", ANIMALS, None),
    ("我觉得是一只dog", ANIMALS, None),
    ("图中的颜色是 blue。", COLOURS, "C"),
    # numbers
    ("3", COUNTS, "B"),
    ("There are 4 apples.", COUNTS, "C"),
    ("I count 5 people in the image.", COUNTS, "D"),
    ("Between 2 and 3.", COUNTS, None),
    ("There are 7 birds.", COUNTS, None),
    ("three", COUNTS, "B"),
    ("There are three.", COUNTS, "B"),
    ("There are three, not two.", COUNTS, None),
    ("one", ["1", "2", "3"], "A"),
    ("the one on the left", ["1", "2", "3"], None),
    ("Three or four.", COUNTS, None),
    # yes / no
    ("Yes", YES_NO, "A"),
    ("No, it is not.", YES_NO, "B"),
    ("yes.", YES_NO, "A"),
    ("Yes and no.", YES_NO, None),
    # refusals and cannot-determine: Z
    ("", ANIMALS, "Z"),
    ("   ", ANIMALS, "Z"),
    ("I cannot determine the answer from the image.", ANIMALS, "Z"),
    ("It can't be determined.", ANIMALS, "Z"),
    ("None of the above.", ANIMALS, "Z"),
    ("None of the options is correct.", ANIMALS, "Z"),
    ("I'm sorry, but I can't help with that.", ANIMALS, "Z"),
    ("There is not enough information to answer.", ANIMALS, "Z"),
    ("无法确定", ANIMALS, "Z"),
    ("以上都不是", ANIMALS, "Z"),
    ("I cannot tell for sure, maybe B.", ANIMALS, None),
    # long responses: a stray capital is not an answer, a labelled one is
    (
        "The image shows an orange fruit, which is rich in vitamin C and grows on trees in warm climates.",
        ANIMALS,
        None,
    ),
    (
        "Looking closely at the scene, the animal has fins and scales and swims, so the best match is (D) in the list.",
        ANIMALS,
        "D",
    ),
    (
        "Let me think step by step. The animal barks and wags its tail, so it is a dog.",
        ANIMALS,
        "B",
    ),
    # long responses (their anchor words are read from their words)
    (
        "After weighing every detail of the picture, the animal on the mat is clearly not (A), so the correct answer is C.",
        ANIMALS,
        "C",
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, I'd pick B without much doubt at all.",
        ANIMALS,
        "B",
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, the most plausible reading is optionD here.",
        ANIMALS,
        "D",
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, I cannot determine which animal it is.",
        ANIMALS,
        "Z",
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, it is (B) rather than (C) in the end.",
        ANIMALS,
        "B",
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, the right one sits on the left side.",
        ANIMALS,
        None,
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, none of the options fits the animal shown.",
        ANIMALS,
        "Z",
    ),
    (
        "After weighing every detail of the picture and the shape of its ears, I would say (C), although it isn't B.",
        ANIMALS,
        "C",
    ),
    # other shapes
    ("Option (C) is correct.", ANIMALS, "C"),
    ("Choice: A", ANIMALS, "A"),
    ("**Answer:** B", ANIMALS, "B"),
    ("B\n\nExplanation: dogs bark.", ANIMALS, "B"),
    ("C. A bird.", ANIMALS, "C"),
    ("The answer is A", YES_NO, "A"),
    ("B", YES_NO, "B"),
    ("C", YES_NO, None),
]


def test_the_table_is_large_enough():
    assert len(TABLE) >= 80


@pytest.mark.parametrize(
    "response, options, expected",
    TABLE,
    ids=[f"{i}:{r[:30]!r}" for i, (r, _, _) in enumerate(TABLE)],
)
def test_extraction(response, options, expected):
    result = extract_choice(response, options)
    assert result.letter == expected, result.reason
    assert result.by == "heuristic" and result.reason


def test_a_remembered_reading_is_the_same_reading():
    """Short responses' readings by letters are remembered per option count; what depends on the
    option texts is read every time."""
    for _ in range(2):
        assert extract_choice("C", ["x", "y"]).letter is None
        assert extract_choice("C", ["x", "y", "z"]).letter == "C"
        assert extract_choice("It is a dog.", ANIMALS).letter == "B"
        assert extract_choice("It is a dog.", ["a dog", "a cat"]).letter == "A"
        assert extract_choice("是香蕉", FRUITS).letter == "B"
        assert extract_choice("是香蕉", ["香蕉", "苹果"]).letter == "A"
        clear_caches()
