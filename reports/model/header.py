"""The report's header facts, read by both renderers: the judge line and the package versions."""
from __future__ import annotations


def vendor_packages(spec: dict) -> list[str]:
    """The packages the run's metrics name (``packages`` of each spec metric), shown in the header; the rest
    of ``spec.packages`` goes in a details list.

    >>> vendor_packages({"metrics": [{"name": "a", "packages": ["x", "y"]}, {"name": "b", "packages": ["y"]}]})
    ['x', 'y']
    """
    return list(dict.fromkeys(p for m in spec.get("metrics") or [] for p in m.get("packages") or ()))


def judge_lines(spec: dict) -> tuple[str, str]:
    """(the judge in one line, what that means for reading the report).

    >>> judge_lines({"judge": {"kind": "reference"}})[0]
    'judge: reference (annotation-driven)'
    >>> judge_lines({"judge": {"kind": "http", "model": "m", "url": "http://x/v1"}})[0]
    'judge: m at http://x/v1'
    """
    j = spec.get("judge") or {}
    if j.get("kind", "reference") == "reference":
        return ("judge: reference (annotation-driven)",
                "The reference judge answers every metric's prompts from the human claim labels, offline "
                "and deterministically (label table v" + str(j.get("reference_version") or "?") + "). "
                "The judge is held constant, so every difference between metrics below comes only from "
                "their definitions.")
    return (f"judge: {j.get('model')} at {j.get('url')}",
            "A model judged this run. Differences between metrics mix their definitions with the "
            "judge's own reading of each metric's prompts.")


def versions(spec: dict) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(vendor packages, other packages) as (name, version) pairs."""
    pk = spec.get("packages") or {}
    named = vendor_packages(spec)
    main = [(p, str(pk.get(p) or "not installed")) for p in named if p in pk]
    rest = [(p, str(v or "not installed")) for p, v in sorted(pk.items()) if p not in named]
    return main, rest
