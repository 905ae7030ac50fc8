from benchfoundry.core.text import width
from tasks.generate.drafts import length_flags


def test_width_counts_a_chinese_character_as_about_a_word():
    assert width("red") == 3 and width("红色") == 4 and width("OPEN 营业") == 9
    # Chinese options beside a kept printed word are no outlier by width (10 against a median
    # of 6), where counted in characters the word would be (10 against 3).
    options = ["红色", "蓝色", "深绿色", "OPEN DAILY"]
    assert length_flags(options, 3.0) == []
    assert length_flags(["红", "蓝", "绿", "一个非常非常非常长的选项"], 3.0) == ["length_outlier"]
