"""One file per schema change, in order; never edit an applied one."""
