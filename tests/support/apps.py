"""Tear down a Faust app that a unit test built and never started."""

from __future__ import annotations

import faust

__all__ = ["close_consumer_loop"]


def close_consumer_loop(app: faust.App) -> None:
    """Close the event loop of the app's consumer thread, if the app built its consumer.

    Iterating a stream or reading ``app.consumer`` builds Faust's Kafka consumer, whose
    thread owns an event loop from the start; a thread that never ran leaves that loop open
    (a ResourceWarning, and a file descriptor per test) unless it is closed here.
    """
    consumer = app._consumer
    if consumer is not None:
        consumer._thread.thread_loop.close()
