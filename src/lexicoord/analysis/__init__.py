"""Numbers, tables and figures, computed from stored events only."""
