"""The collector process: its HTTP service, the run's state, the record keeping and the visibility probe."""
