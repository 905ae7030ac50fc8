"""When refusals stop a model (`tasks/evaluate/failures.py`): decided by how many distinct
images were refused, never by neighbouring calls; a refusal about one question's content (an
image limit, a context limit) never stops it; refusals about the model itself (401, 403, 404)
stop it after five in a row."""

from __future__ import annotations

from benchfoundry.tasks.evaluate.failures import Watch

LIMIT = "HTTP 400: At most 1 image(s) may be provided in one request."
REFUSED = "HTTP 400: the request was refused"


def test_neighbours_on_one_image_do_not_stop_a_model():
    watch = Watch()
    for image in ("clip-1", "clip-2"):  # a clip's three English and three Chinese questions
        for _ in range(6):
            watch.saw("HTTP 400", image, REFUSED)
    watch.saw(None)
    for image in ("clip-3", "clip-4", "clip-5", "clip-6", "clip-7"):
        watch.saw("HTTP 400", image, REFUSED)  # after an answer: some questions are refused
    assert watch.stopped is None


def test_the_same_refusal_of_five_distinct_images_before_any_answer_stops_it():
    watch = Watch()
    for image in ("a", "a", "b", "c", "d"):
        watch.saw("HTTP 400", image, REFUSED)
    assert watch.stopped is None, "four distinct images so far"
    watch.saw("HTTP 400", "e", REFUSED)
    assert watch.stopped and "5 distinct images" in watch.stopped


def test_an_image_limit_never_stops_a_model():
    watch = Watch()
    for k in range(40):
        watch.saw("HTTP 400", f"image-{k}", LIMIT)
    assert watch.stopped is None


def test_refusals_about_the_model_stop_it_after_five_in_a_row():
    watch = Watch(answered=3)
    for _ in range(4):
        watch.saw("HTTP 401", "x", "HTTP 401: Incorrect API key provided")
    watch.saw(None)
    for _ in range(4):
        watch.saw("HTTP 401", "x", "HTTP 401: Incorrect API key provided")
    assert watch.stopped is None
    watch.saw("HTTP 401", "x", "HTTP 401: Incorrect API key provided")
    assert watch.stopped == "stopped after 5 calls in a row refused with HTTP 401"
