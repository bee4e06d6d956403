"""LearningSamples: the model we write, the builders, ids, preference and replan pairs."""
