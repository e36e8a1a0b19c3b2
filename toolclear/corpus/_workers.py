"""Stopping a process pool's workers now, not when they finish what they hold."""

from __future__ import annotations

from typing import Any

__all__ = ["stop_workers"]


def stop_workers(pool: Any) -> None:
    """Cancel what is queued and end every worker of a ``ProcessPoolExecutor``: on
    Ctrl-C, SIGTERM or a dead worker, none reads on after its caller has given up."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # no public way to name them before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for p in workers:
        if p.is_alive():
            p.terminate()
    for p in workers:
        p.join(5)
        if p.is_alive():
            p.kill()
