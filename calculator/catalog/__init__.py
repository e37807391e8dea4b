"""Data catalogues: price sheets, GPU specs, model specs and measurement records.

The lowest layer. Each catalogue is a set of YAML files read through one safe loader
(:mod:`calculator.catalog.datafile`) into frozen pydantic models; the bundled files ship in
``calculator/data/`` and a user's own folders are read the same way.
"""
