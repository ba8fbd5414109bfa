"""Experiments as files: a TOML file names a protocol, its data, models by role, settings and grid; each
protocol's plan turns it into the episodes of one run (``lexicoord run FILE``)."""
