"""The replay policies of a tool: what replay does with a recorded call.

``never``: the body never runs again in replay (a side effect: an email, a write, a payment);
the recorded result is returned, a recorded exception raised again. ``safe``: the body runs in
replay too (a read-only lookup), and a result that differs from the recording is reported.
"""

from __future__ import annotations

from typing import Literal, cast, get_args

from cassettes_core._errors import ConfigError

ReplayPolicy = Literal["never", "safe"]
POLICIES: tuple[str, ...] = get_args(ReplayPolicy)


def parse_policy(value: object, *, where: str) -> ReplayPolicy:
    """``value`` as a policy; a :class:`ConfigError` naming ``where`` and the choices."""
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in POLICIES:
        raise ConfigError(
            f"{where}: replay={value!r} is not a replay policy; use replay='never' (side "
            "effects: replay returns the recording, the body never runs) or replay='safe' "
            "(read-only: the body runs again and its result is compared)"
        )
    return cast("ReplayPolicy", text)
