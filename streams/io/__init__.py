"""Everything that talks to Kafka, Faust, HTTP or a child process; the rest of streams/ is pure."""
