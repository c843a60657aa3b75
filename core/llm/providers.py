"""Model strings litellm understands ('provider/model'), told apart without a network call, so
that a mistyped provider stops start-up instead of failing every question."""

from __future__ import annotations

import os

from core.config import LLMSettings
from core.errors import ConfigurationError

EXAMPLES = {"embedding": "openai/text-embedding-3-small, or builtin",
            "llm": "openai/gpt-4o-mini or ollama/llama3.1"}


def model_provider(setting: str, model: str, api_base: str | None = None) -> str:
    """The litellm provider of `model` ('openai', 'ollama', ...); ConfigurationError naming
    `setting` when litellm knows none."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    try:
        return str(litellm.get_llm_provider(model=model, api_base=api_base)[1])
    except Exception:  # litellm raises BadRequestError (and others) for an unknown provider
        prefix, slash, _ = model.partition("/")
        what = f"names no provider litellm knows ({prefix!r})" if slash else "has no provider"
        example = EXAMPLES.get(setting.partition(".")[0], "provider/model")
        raise ConfigurationError(f"{setting}: {model!r} {what}: write provider/model, e.g. "
                                 f"{example}") from None


def llm_models(settings: LLMSettings) -> list[tuple[str, str]]:
    """(setting, model) for every model the LLM settings name, fallbacks included."""
    named = [("llm.fast_model", settings.fast_model), ("llm.strong_model", settings.strong_model)]
    named += [("advanced.llm.fast_fallbacks", model) for model in settings.fast_fallbacks]
    named += [("advanced.llm.strong_fallbacks", model) for model in settings.strong_fallbacks]
    return [(setting, model) for setting, model in named if model]


def check_llm_models(settings: LLMSettings) -> None:
    """ConfigurationError for the first model whose provider litellm does not know."""
    for setting, model in llm_models(settings):
        model_provider(setting, model, settings.api_base)
