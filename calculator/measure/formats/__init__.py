"""One reader per benchmark tool's result format; :mod:`calculator.measure.importers` detects the format and
turns what a reader found into records."""
