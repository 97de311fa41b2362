"""The cases layer: loading and validating case files, other tools' column names, importers, and the
canonical cases as package data. Imports only :mod:`harness.core` (and :mod:`harness.metric.protocol`)."""
from harness.cases.load import CaseFileError, CaseSet, load_cases, parse_case

__all__ = ["CaseFileError", "CaseSet", "load_cases", "parse_case"]
