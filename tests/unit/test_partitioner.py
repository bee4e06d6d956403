"""Kafka's default partitioner, written without a Kafka client (streams/offsets/partitioner.py)."""

from __future__ import annotations

import pytest
from aiokafka.partitioner import murmur2 as aiokafka_murmur2
from hypothesis import given, settings
from hypothesis import strategies as st

from learnstream.streams.join.expiry import partition_of
from learnstream.streams.offsets.partitioner import murmur2, partition_for

# Utils.murmur2 of Apache Kafka's Java client, from its own UtilsTest (signed Java ints).
JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
    b"1": -1993445489,
    b"12": 126087238,
    b"123": -267702483,
    b"1234": -1614185708,
    b"12345": -1188365604,
}


@pytest.mark.parametrize(("key", "expected"), JAVA_MURMUR2.items())
def test_murmur2_equals_the_java_clients(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


@settings(max_examples=2000)
@given(st.binary(max_size=300))
def test_murmur2_equals_aiokafkas_on_any_bytes(key: bytes) -> None:
    # aiokafka returns the same 32 bits unsigned
    assert murmur2(key) & 0xFFFFFFFF == aiokafka_murmur2(key)


@given(st.text(max_size=80), st.integers(min_value=1, max_value=1000))
def test_partition_equals_aiokafkas_default_partitioner(key: str, partitions: int) -> None:
    data = key.encode()
    expected = (aiokafka_murmur2(data) & 0x7FFFFFFF) % partitions
    assert partition_for(data, partitions) == expected
    assert partition_of(key, partitions) == expected


def test_partition_of_known_keys() -> None:
    # toPositive(murmur2) % n, from the Java values above
    assert (-973932308 & 0x7FFFFFFF) % 7 == 3
    assert partition_for(b"21", 7) == 3
    assert (-790332482 & 0x7FFFFFFF) % 10 == 6
    assert partition_for(b"foobar", 10) == 6
    assert partition_for(b"abc", 10) == 479470107 % 10 == 7


def test_no_partitions_is_refused() -> None:
    with pytest.raises(ValueError, match="partitions must be 1 or more"):
        partition_for(b"key", 0)
