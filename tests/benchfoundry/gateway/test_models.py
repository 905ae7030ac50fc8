import pytest

from benchfoundry.gateway import Gateway, ModelConfigError, ModelSpec, load_catalogue, parse_model
from benchfoundry.gateway.assemble import DEFAULT_CATALOGUE


@pytest.mark.parametrize(
    "text, provider, model, base_url",
    [
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini", None),
        (
            "openai/Qwen2-VL-7B@http://127.0.0.1:8000/v1",
            "openai",
            "Qwen2-VL-7B",
            "http://127.0.0.1:8000/v1",
        ),
        ("hf/models/tiny-vlm", "hf", "models/tiny-vlm", None),
        ("smollm2", "smollm2", "", None),
        ("blind/letter-B", "blind", "letter-B", None),
        ("facts/openai/gpt-4o", "facts", "openai/gpt-4o", None),
    ],
)
def test_spec_strings(text, provider, model, base_url):
    spec = parse_model(text)
    assert (spec.name, spec.provider, spec.model, spec.base_url) == (
        text,
        provider,
        model,
        base_url,
    )


@pytest.mark.parametrize("text", ["", "gpt4", "openai/", "openai/x@ftp://host"])
def test_bad_spec_strings_say_what_is_expected(text):
    with pytest.raises(ModelConfigError):
        parse_model(text)


def test_unknown_provider_and_baseline_are_named():
    with pytest.raises(ModelConfigError, match="unknown provider 'vllm'"):
        Gateway().provider("vllm/x")
    with pytest.raises(ModelConfigError, match="unknown blind baseline 'psychic'"):
        Gateway().provider("blind/psychic")


def test_the_shipped_catalogue_loads():
    catalogue = load_catalogue(DEFAULT_CATALOGUE)
    assert {"smollm2", "facts-smollm2", "blind-random", "gpt-4o-mini"} <= set(catalogue)
    assert catalogue["gpt-4o-mini"].cost(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert Gateway(catalogue).spec("gpt-4o-mini").api_key_env == "OPENAI_API_KEY"


def test_catalogue_errors_name_the_entry(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n  - {name: a, provider: blind, model: random}\n  - {name: b, provider: openai, modle: x}\n"
    )
    with pytest.raises(ModelConfigError, match=r"entry 1: modle: Extra inputs"):
        load_catalogue(path)
    path.write_text(
        "models:\n  - {name: a, provider: blind, model: random}\n  - {name: a, provider: blind, model: longest}\n"
    )
    with pytest.raises(ModelConfigError, match="used twice"):
        load_catalogue(path)
    assert ModelSpec(name="x", provider="blind").concurrency == 4


def test_only_credentials_are_masked_in_a_models_name():
    from benchfoundry.gateway.models import mask_spec_string, parse_model

    assert mask_spec_string("openai/m@http://h/v1?api-version=2024-06-01") == (
        "openai/m@http://h/v1?api-version=2024-06-01"
    )
    assert mask_spec_string("openai/m@https://h/v1?api-key=s3cr3t&api-version=2") == (
        "openai/m@https://h/v1?api-key=***&api-version=2"
    )
    one = parse_model("openai/m@http://h/v1?api-version=1")
    two = parse_model("openai/m@http://h/v1?api-version=2")
    assert one.name != two.name and two.base_url.endswith("api-version=2")
    with pytest.raises(Exception, match="must be an http") as raised:
        parse_model("openai/m@ftp://user:hunter22@h/v1")
    assert "hunter22" not in str(raised.value)
