"""What SREs see: the Prometheus metrics, stalled partitions, consumer lag."""
