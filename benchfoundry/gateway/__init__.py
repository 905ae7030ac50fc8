"""The model gateway: one interface for every LLM and VLM call (see `gateway.Gateway`)."""

from benchfoundry.gateway.cache import ResponseCache
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelCallError, ModelConfigError, NotSupportedError
from benchfoundry.gateway.gateway import Gateway, Request
from benchfoundry.gateway.models import ModelSpec, load_catalogue, parse_model
from benchfoundry.gateway.types import MCQ, GenerateParams, OptionScores, Response

__all__ = [
    "MCQ",
    "Gateway",
    "GatewayContext",
    "GenerateParams",
    "ModelCallError",
    "ModelConfigError",
    "ModelSpec",
    "NotSupportedError",
    "OptionScores",
    "Request",
    "Response",
    "ResponseCache",
    "load_catalogue",
    "parse_model",
]
