"""Build the ``faust.App`` from settings, and nothing else."""

from __future__ import annotations

from pathlib import Path

import faust

from learnstream.streams.config.settings import Settings
from learnstream.streams.io.connection import KafkaConnection
from learnstream.streams.io.topics import MAX_MESSAGE_BYTES
from learnstream.streams.io.web_auth import web_application_options

__all__ = ["create_app", "one_record_per_batch"]


def one_record_per_batch(settings: Settings, embedded: bool) -> bool:
    """Return True when every producer must send one record per batch.

    The embedded broker counts record *batches*, not records, in its high watermark, so
    Faust's table recovery would stop short of the last records of a multi-record batch.
    """
    forced = settings.broker.one_record_per_batch
    return embedded if forced is None else forced


def create_app(settings: Settings, broker_url: str, *, embedded: bool) -> faust.App:
    """Return a Faust app configured from ``settings`` for the broker at ``broker_url``."""
    single = one_record_per_batch(settings, embedded)
    datadir = Path(settings.data_dir) / settings.app_id
    datadir.mkdir(parents=True, exist_ok=True)
    return faust.App(
        settings.app_id,
        broker=broker_url,
        # TLS / SASL of LEARNSTREAM_BROKER__* (None in plaintext): every Faust client uses it.
        broker_credentials=KafkaConnection.of(settings.broker, broker_url).faust_credentials(),
        store=settings.store,
        datadir=str(datadir),
        autodiscover=False,
        topic_partitions=settings.topics.partitions,
        # decided for the cluster before the app is built (agents/worker.py); 1 if never asked
        topic_replication_factor=settings.topics.replication_factor or 1,
        topic_allow_declare=True,
        key_serializer="raw",
        value_serializer="raw",
        processing_guarantee=settings.processing_guarantee,
        producer_acks=-1,
        # aiokafka keeps one open batch per partition and one request in flight per broker:
        # an agent that fills a batch waits until it is sent, so batches must be large.
        producer_max_batch_size=1 if single else settings.broker.max_batch_bytes,
        # 0 by default: the next batch fills while a request is in flight, and a linger only
        # delays the acks the join and each commit wait for (benchmarks/RESULTS.md, findings
        # behind the design).
        producer_linger=settings.broker.linger_ms / 1000.0,
        producer_max_request_size=MAX_MESSAGE_BYTES,
        # aiokafka skips a record larger than the fetch size (RecordTooLargeError): it must
        # hold the largest input record. What a poll hands over is bounded instead: with no
        # bound, a changelog restore holds hundreds of MiB of fetched records in flight
        # (benchmarks/RESULTS.md, memory).
        consumer_max_fetch_size=2 * MAX_MESSAGE_BYTES,
        broker_max_poll_records=settings.broker.max_poll_records,
        broker_session_timeout=settings.broker.session_timeout,
        broker_rebalance_timeout=settings.broker.rebalance_timeout,
        broker_heartbeat_interval=settings.broker.heartbeat_interval,
        web_enabled=True,
        # Faust's built-in pages would serve table contents (raw, un-anonymized input under
        # /table/pending/<plan_id>/), cluster topology and sensor internals to anyone on the
        # port. Only our own pages (/metrics, /quality) are mounted; "/" answers {"status": "OK"}.
        web_tables_enabled=False,
        web_router_enabled=False,  # we route nothing across workers (no @table_route)
        web_stats_enabled=False,
        web_graph_enabled=False,
        web_metrics_enabled=False,
        web_bind=settings.web_host,
        web_host=settings.web_host,
        web_port=settings.web_port,
        web_in_thread=False,
        # Token and body limit on every route, Faust's own included (streams/io/web_auth.py).
        web_application_options=web_application_options(settings.web),
        table_cleanup_interval=30.0,
    )
