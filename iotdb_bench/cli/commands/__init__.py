"""The commands: options in, runs asked of the run layer, results shown by the report layer."""
