"""Policies from other packages: the ``toolclear.policies`` entry-point group.

A package that declares an entry point in this group, pointing at a ``PolicyInfo``
(or a full ``toolclear.policies.PolicySpec``), gets its policy into
``toolclear.replay`` / ``apply`` / ``compare``, the corpus sweep, the CLI's ``--policy``
and the app's picker, with no change to toolclear::

    [project.entry-points."toolclear.policies"]
    keep-last = "my_package.policy:POLICY"

The policy is a frozen dataclass config and an engine factory; the engine is advanced
over the prefix length of each model call and answers which messages now look
different (see ``toolclear.policies._engine.Engine``). The README has a complete example.
The loading lives with the registry, in ``toolclear.policies``; this module keeps the
names plugins import.
"""

from __future__ import annotations

from .policies import ENTRY_POINT_GROUP, PolicyInfo, plugin_for, plugins

__all__ = ["ENTRY_POINT_GROUP", "PolicyInfo", "plugin_for", "plugins"]
