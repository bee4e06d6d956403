"""The A2E learn capability's Kafka side: the learn agent, its HTTP views, what its requests
write, and the skill stats every worker reads."""
