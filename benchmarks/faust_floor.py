"""The Faust floor: the least a Faust worker can do per event, on the same topics.

One Faust agent reads the five input topics and, per event, parses the value
(``json.loads``) and sends it unchanged to one output topic: no tables, no sensors, no
privacy, one produced record per event. learnstream is built on Faust, so this, not the raw
aiokafka baseline, is the ceiling its design can reach on this machine; the benchmark
reports both. Run by the benchmark as ``python -m benchmarks.faust_floor``; SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import json
import tempfile

import faust
from faust.types import StreamT

from benchmarks.baseline import pass_through_parser

__all__ = ["build_app", "main"]


def build_app(args: argparse.Namespace, datadir: str) -> faust.App:
    """Return the pass-through app, configured like the worker's producer."""
    app = faust.App(
        args.group,
        broker=f"kafka://{args.bootstrap}",
        datadir=datadir,
        autodiscover=False,
        web_enabled=False,
        key_serializer="raw",
        value_serializer="raw",
        producer_acks=-1,
        # The same batching as the worker (streams/io/app.py): one record per batch on Tansu.
        producer_max_batch_size=1 if args.embedded else 1024 * 1024,
        topic_allow_declare=False,
        # The worker's group timings (streams/config/settings.py BrokerSettings): a restart
        # waits out the old member's session, and the embedded broker holds a join for half
        # of the session timeout, so Faust's 60 s default would measure the broker, not Faust.
        broker_rebalance_timeout=5,
        broker_session_timeout=10,
        broker_heartbeat_interval=1,
    )
    source = app.topic(*args.inputs)
    output = app.topic(args.output)

    @app.agent(source, name="floor.pass_through")
    async def pass_through(stream: StreamT[bytes]) -> None:
        async for event in stream.events():
            json.loads(event.message.value or b"null")
            await output.send(key=event.message.key, value=event.message.value)

    return app


def main() -> None:
    """Run the Faust pass-through worker until SIGTERM."""
    parser = pass_through_parser(__doc__)  # --group is the Faust app id
    # benchmarks/startup.py waits for Faust's "Ready" line, logged at info
    parser.add_argument("--log-level", default="warning", help="Faust's log level")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faust-floor-") as datadir:
        app = build_app(args, datadir)
        worker = faust.Worker(app, loglevel=args.log_level.upper(), quiet=True)
        worker.execute_from_commandline()


if __name__ == "__main__":
    main()
