"""toolclear policies as the OpenAI Agents SDK's ``RunConfig(call_model_input_filter=...)``.

The SDK keeps its own items and sends what the filter returns for that one call, so
this is the per-call mode (``toolclear.replay(..., persist=False)``). The items are read
and written back by toolclear's ``openai-responses`` format, exactly as a saved session
is, so every field of an item the policy leaves alone is kept and a cleared output
keeps its item's shape. Instructions are not items; they are per-call overhead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..formats import dump
from ..formats._doc import parse
from ..formats.responses import OpenAIResponsesFormat
from ..model import Transcript
from ..result import Result
from ._live import Live

__all__ = ["call_model_input_filter", "from_items"]


def _item(item: Any) -> Any:
    return item if isinstance(item, dict) else item.model_dump(exclude_unset=True, mode="json")


def from_items(items: Sequence[Any]) -> Transcript:
    """Agents SDK input items (dicts or the SDK's models) read as a saved session is."""
    data = json.dumps([_item(i) for i in items], default=str).encode()
    return OpenAIResponsesFormat().read(parse(data), "Agents SDK input")[0]


def call_model_input_filter(config: Any, *, on_result: Callable[[Result], None] | None = None, counter: Any = None,
                            backend: Any = None, tools: Sequence[Any] = ()) -> Callable[[Any], Any]:
    """A ``call_model_input_filter`` running ``config`` (any toolclear policy) on the
    items of each model call; ``on_result`` receives each call's ``Result``."""
    live = Live(config, on_result=on_result, counter=counter, backend=backend, tools=tools)

    def filter_input(data: Any) -> Any:
        from agents.run_config import ModelInputData

        model_data = data.model_data
        if not model_data.input:
            return model_data
        transcript = from_items(model_data.input)
        result = live.run(transcript.messages)
        if not live.changes(transcript.messages, result):
            return model_data
        edited = json.loads(dump(transcript, result.messages))
        return ModelInputData(input=edited, instructions=model_data.instructions)

    return filter_input
