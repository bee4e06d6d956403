"""Where the worker touches Faust's and the Kafka client's own parts: patched seams, checks,
sensors, start-up timing, and the worker's own readers of the broker."""
