"""The worker process: the timed loop, pacing, preparing batches, the read side and the query clients."""
