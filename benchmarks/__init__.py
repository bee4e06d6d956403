"""Throughput, latency, scale-out and memory benchmarks of learnstream (``make bench``)."""
