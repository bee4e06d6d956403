"""MPLP inputs: the models runtimes' events decode to, their field types, the decoders."""
