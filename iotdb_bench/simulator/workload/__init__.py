"""Workload generation: the events, the data shapes, the open-loop schedule, continued streams."""
