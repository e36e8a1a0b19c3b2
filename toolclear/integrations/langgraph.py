"""toolclear policies as the ``pre_model_hook`` of LangGraph's prebuilt agents
(``create_react_agent``).

``persist=True`` returns ``messages`` (all removed, then the edited history), so the
edit is written to the graph state and every later call sees the same cleared prefix;
``persist=False`` returns ``llm_input_messages``, which the model sees this once and the
state never keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ..result import Result
from .langchain import LangChainLive

__all__ = ["pre_model_hook"]


def pre_model_hook(config: Any, persist: bool = True, *, on_result: Callable[[Result], None] | None = None,
                   counter: Any = None, backend: Any = None,
                   tools: Sequence[Any] = ()) -> Callable[[Any], dict[str, Any]]:
    """A ``pre_model_hook`` running ``config`` (any toolclear policy) before each call;
    ``on_result`` receives each call's ``Result``."""
    live = LangChainLive(config, persist, counter=counter, on_result=on_result, backend=backend, tools=tools)

    def hook(state: Any) -> dict[str, Any]:
        messages = state["messages"] if isinstance(state, dict) else state.messages
        edited = live.edit(messages)
        if edited is None:
            return {"llm_input_messages": list(messages)}
        if persist:
            # llm_input_messages is a state channel too: set it, or an earlier call's stays
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *edited], "llm_input_messages": edited}
        return {"llm_input_messages": edited}

    return hook
