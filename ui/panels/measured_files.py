"""The files the Plan vs actual panel reads, named without importing the panel (the window's
File > Open filter and drop routing are built before any panel is)."""

MEASURED_SUFFIXES = (".log", ".txt", ".out", ".err", ".csv")
#: The File > Open filter entry for these files.
OPEN_FILTER_ENTRY = "Training logs and energy CSVs (*.log *.txt *.out *.err *.csv)"
