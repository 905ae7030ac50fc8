"""The parts models play in a build, and the check of a role -> models table."""

from __future__ import annotations

# Who plays which part in a build: generate asks `generator` (and `generator_reasoning` for the
# reasoning dimensions), filter `text_only`, consensus `vlm`, and `judge` reads answers the
# heuristic choice extractor cannot.
MODEL_ROLES = ("generator", "generator_reasoning", "text_only", "vlm", "judge", "translator")
# The embedded models a role falls back to when a spec leaves it out: SmolLM2 answers without
# the image, and SmolLM2 reading the extracted facts stands in for a vision-language model.
DEFAULT_MODELS: dict[str, tuple[str, ...]] = {"text_only": ("smollm2",), "vlm": ("facts-smollm2",)}


def role_problem(models: dict[str, list[str]]) -> str | None:
    """What is wrong with a role -> models table (an unknown role, a role with no model), or
    None. Checked on a spec and again where a flow is called with its own table."""
    unknown = [role for role in models if role not in MODEL_ROLES]
    if unknown:
        return f"unknown model role(s) {unknown}; the roles are {', '.join(MODEL_ROLES)}"
    empty = [role for role, names in models.items() if not names]
    if empty:
        return (
            f"role(s) {empty} list no model; name at least one, or leave the role out to use "
            "its default"
        )
    return None
